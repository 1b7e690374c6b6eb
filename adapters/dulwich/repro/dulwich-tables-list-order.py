#!/usr/bin/env python3
"""A later dulwich write undoes git's acknowledged update: after each single write dulwich
rebuilds tables.list from the directory listing sorted by file name
(ReftableRefsContainer._update_tables_list), and names its own tables by the time in
microseconds (_generate_table_path: 0x000661f3...), which sorts after git's update-index
names (0x000000000004-...). git's table, written after one of dulwich's, is then listed
before it, and git takes dulwich's older table as the newer.

dulwich creates refs/heads/x at C1; git moves it to C2 (acknowledged); dulwich creates
refs/heads/y; git reads x at C1 again. Exit 1 while the defect shows.
"""
from _repo import dulwich_repo, reftable_repo, verdict

Repo, version = dulwich_repo()
git, gitdir = reftable_repo()   # auto-compaction off: git's geometric rule merging nothing
c1, c2 = git.out("rev-parse", "topic"), git.out("rev-parse", "main")
r = Repo(gitdir)
if not r.refs.add_if_new(b"refs/heads/x", c1.encode()):
    verdict(False, f"dulwich {version} did not create refs/heads/x; nothing to show")
r.close()
git.run("update-ref", "refs/heads/x", c2, c1)
r = Repo(gitdir)
r.refs.add_if_new(b"refs/heads/y", c1.encode())
r.close()
now = git.out("rev-parse", "refs/heads/x")
tables = open(f"{gitdir}/reftable/tables.list").read().split()
verdict(now != c2,
        f"dulwich {version}: git moved refs/heads/x to {c2[:12]}, a later dulwich write of "
        f"refs/heads/y puts it back at {now[:12]}; tables.list {tables}")
