#!/usr/bin/env python3
"""dulwich cannot write ref names of 48 bytes or more past the previous name, and writes
symref targets of 128 bytes or more so that git loses every ref: _encode_reftable_suffix_and_type
writes bytes([0x80, value - 0x80]) (ValueError from 384 on, a wrong varint from 256), and
_encode_ref_value writes a symref target's length with encode_varint, LEB128, where git's
varint is another encoding.

add_if_new(refs/heads/ + 60 'x') raises ValueError (leaving a half-written table in the
directory); set_symbolic_ref to refs/heads/ + 150 'l' makes git list no ref at all.
Exit 1 while the defect shows.
"""
from _repo import dulwich_repo, reftable_repo, verdict

Repo, version = dulwich_repo()
git, gitdir = reftable_repo()
r = Repo(gitdir)
main = r.refs[b"refs/heads/main"]
try:
    r.refs.add_if_new(b"refs/heads/" + b"x" * 60, main)
    error = None
except ValueError as e:
    error = str(e)
r.refs.set_symbolic_ref(b"refs/heads/s", b"refs/heads/" + b"l" * 150)
listed = git.run("for-each-ref", "--format=%(refname)", check=False)
lost = "refs/heads/main" not in listed.stdout.split()
verdict(error is not None or lost,
        f"dulwich {version}: add_if_new of a 71-byte name: {error or 'written'}; after "
        f"set_symbolic_ref to a 161-byte target git for-each-ref (exit {listed.returncode}) "
        f"lists {len(listed.stdout.split())} refs, refs/heads/main {'lost' if lost else 'kept'}")
