#!/usr/bin/env python3
"""dulwich misreads ref names of 16 bytes or more past the previous name (and symref
targets of 128 bytes or more): _decode_reftable_suffix_and_type adds the two bytes of git's
varint instead of decoding it ((b0 & 0x7f) + 1 << 7 | b1), and decode_varint_from_stream
(symref target lengths) reads LEB128. The record is cut short, its name's bytes are read as
an object id, and the records after it are lost or invented.

git makes refs/heads/ + 150 'l', a symref to it and refs/heads/zz; dulwich's allkeys and
read_loose_ref do not show them as git does. Exit 1 while the defect shows.
"""
from _repo import dulwich_repo, reftable_repo, verdict

Repo, version = dulwich_repo()
git, gitdir = reftable_repo()
long = "refs/heads/" + "l" * 150
git.run("update-ref", long, "HEAD")
git.run("symbolic-ref", "refs/heads/s", long)
git.run("update-ref", "refs/heads/zz", "HEAD")
want = set(git.out("for-each-ref", "--format=%(refname)").split())
refs = Repo(gitdir).refs
got = set()
for name in refs.allkeys():
    try:
        refs.read_loose_ref(name)
        got.add(bytes(name).decode("utf-8", "replace"))
    except KeyError:
        pass
got.discard("HEAD")
missing, invented = sorted(want - got), sorted(got - want)
verdict(bool(missing or invented),
        f"dulwich {version}: refs git has that dulwich does not read: "
        f"{[m[:40] for m in missing]}; refs dulwich reads that git has not: "
        f"{[i[:40] for i in invented]}")
