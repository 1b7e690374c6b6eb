#!/usr/bin/env python3
"""dulwich reads only the first ref block of a table: ReftableReader._read_blocks takes a
block's block_len as the length after the 4-byte block header (git's counts from the
block's start, the 24-byte file header included in the first block), so it reads into the
next block and loses its framing; RefBlock.decode finds the records' end by searching for
bytes 00 00 1c instead of reading the restart table.

git writes 200 tags in one table (two ref blocks of 4096 bytes); dulwich's allkeys misses
the ones in the second block. Exit 1 while the defect shows.
"""
from _repo import dulwich_repo, reftable_repo, verdict

Repo, version = dulwich_repo()
git, gitdir = reftable_repo()
head = git.out("rev-parse", "HEAD")
git.run("update-ref", "--stdin",
        input="".join(f"create refs/tags/t-{i:04d} {head}\n" for i in range(200)))
want = set(git.out("for-each-ref", "--format=%(refname)", "refs/tags/").split())
got = {bytes(n).decode() for n in Repo(gitdir).refs.allkeys() if n.startswith(b"refs/tags/")}
missing = sorted(want - got)
verdict(bool(missing),
        f"dulwich {version}: of git's {len(want)} tags dulwich reads {len(got & want)}; "
        f"missing {missing[:3]}...")
