"""Generated Neo4j passwords: neo4j-admin reads a leading '-' as an option, so none has one."""

from neo4j_runtime.password import new_password


def test_no_generated_password_starts_with_a_dash():
    passwords = [new_password() for _ in range(2000)]  # about 31 would start with '-' unchecked
    assert not any(p.startswith("-") for p in passwords)
    assert len(set(passwords)) == len(passwords) and min(map(len, passwords)) >= 32
