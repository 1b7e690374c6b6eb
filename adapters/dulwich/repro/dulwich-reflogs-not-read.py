#!/usr/bin/env python3
"""dulwich reads no reflog of a reftable repository: Repo.read_reflog looks for
logs/<ref> files, and ReftableReader skips log blocks.

git shows two entries for refs/heads/main; dulwich's Repo.read_reflog yields none.
Exit 1 while the defect shows (see _repo.py).
"""
from _repo import dulwich_repo, reftable_repo, verdict

Repo, version = dulwich_repo()
git, gitdir = reftable_repo()
want = git.out("reflog", "show", "--format=%H", "refs/heads/main", "--").split()
got = list(Repo(gitdir).read_reflog(b"refs/heads/main"))
verdict(len(got) != len(want),
        f"dulwich {version}: Repo.read_reflog(refs/heads/main) gave {len(got)} entries, "
        f"git shows {len(want)}")
