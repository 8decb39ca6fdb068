// The space's erasure mark, read in a statement of its own once the transaction holds the
// space's write lock (spaces/lock_for_write): a value read in the locking statement itself may
// predate an erasure that committed while that statement waited for the lock.
MATCH (s:Space {id: $space})
RETURN s.erasing IS NOT NULL AS erasing
