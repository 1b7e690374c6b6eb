#!/usr/bin/env python3
"""dulwich writes no reflog entry on a reftable repository: ReftableRefsContainer's
set_if_equals, add_if_new and remove_if_equals accept committer, timestamp, timezone and
message and drop them (Repo builds the container without a logger), and a batch
(batch_update) rewrites the stack into one table of refs only, which drops every entry git
wrote before.

After set_if_equals with a committer and message git's reflog of the ref has no new entry;
after a batch git's reflog of main is empty. Exit 1 while the defect shows.
"""
from _repo import dulwich_repo, reftable_repo, verdict

Repo, version = dulwich_repo()
git, gitdir = reftable_repo()
r = Repo(gitdir)
main, topic = r.refs[b"refs/heads/main"], r.refs[b"refs/heads/topic"]
before = len(git.out("reflog", "show", "--format=%H", "refs/heads/topic", "--").split())
ok = r.refs.set_if_equals(b"refs/heads/topic", topic, main, committer=b"C O Mitter <c@e>",
                          timestamp=1700000100, timezone=0, message=b"fast-forward")
after = len(git.out("reflog", "show", "--format=%H", "refs/heads/topic", "--").split())
with r.refs.batch_update():
    r.refs.add_if_new(b"refs/heads/other", main, committer=b"C O Mitter <c@e>",
                      timestamp=1700000200, timezone=0, message=b"branch: Created")
main_log = git.out("reflog", "show", "--format=%H", "refs/heads/main", "--").split()
verdict(ok and after == before or not main_log,
        f"dulwich {version}: set_if_equals returned {ok}; git's reflog of topic had {before} "
        f"entries before, {after} after; after a batch git's reflog of main has "
        f"{len(main_log)} entries (2 before)")
