// Take the space's write lock: an exclusive lock on its Space node (a write that changes
// nothing), held until the transaction ends. Every transaction that adds to a space takes it
// first, so writes into one space run one at a time and an erasure (which takes the same lock
// to mark the space) never interleaves with them. No row: the space does not exist. The
// erasure mark is read by the next statement (spaces/locked_state), after the lock is held.
MATCH (s:Space {id: $space})
SET s.write_lock = true
REMOVE s.write_lock
RETURN true AS locked
