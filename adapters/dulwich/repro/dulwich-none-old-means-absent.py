#!/usr/bin/env python3
"""dulwich's reftable container reads old_ref None as "must not exist": RefsContainer
documents None as "set unconditionally", but set_if_equals and remove_if_equals compare
the ref's raw value with None and return False for any existing ref. It neither follows
symrefs (HEAD reads as b"ref: refs/heads/main"), so an update or deletion through HEAD can
never succeed. refs[name] = sha (base __setitem__) ignores the False: a silent lost update.

Exit 1 while the defect shows.
"""
from _repo import dulwich_repo, reftable_repo, verdict

Repo, version = dulwich_repo()
git, gitdir = reftable_repo()
r = Repo(gitdir)
topic = r.refs[b"refs/heads/topic"]
set_ok = r.refs.set_if_equals(b"refs/heads/main", None, topic)
del_ok = r.refs.remove_if_equals(b"HEAD", None)
r.refs[b"refs/heads/main"] = topic
now = git.out("rev-parse", "refs/heads/main")
verdict(not set_ok or not del_ok or now != topic.decode(),
        f"dulwich {version}: set_if_equals(main, None, topic) -> {set_ok}; "
        f"remove_if_equals(HEAD, None) -> {del_ok}; after refs[main] = topic git has main at "
        f"{now[:12]}, topic is {topic.decode()[:12]}")
