#!/usr/bin/env python3
"""dulwich's reftable container reads old_ref None as "must not exist": RefsContainer
documents None as "set unconditionally", but set_if_equals and remove_if_equals compare
the ref's raw value with None and return False for any existing ref. It neither follows
symrefs (HEAD reads as b"ref: refs/heads/main"), so an update or deletion through HEAD can
never succeed. refs[name] = sha (base __setitem__) ignores the False: a silent lost update.
add_if_new does not follow symrefs either (DiskRefsContainer.add_if_new does: "only ensures
that the last ref in the chain does not exist"): through a symref to an unborn branch it
returns False, where git creates the branch.

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
git.run("symbolic-ref", "refs/heads/alias", "refs/heads/unborn")
add_ok = Repo(gitdir).refs.add_if_new(b"refs/heads/alias", topic)
verdict(not set_ok or not del_ok or now != topic.decode() or not add_ok,
        f"dulwich {version}: set_if_equals(main, None, topic) -> {set_ok}; "
        f"remove_if_equals(HEAD, None) -> {del_ok}; after refs[main] = topic git has main at "
        f"{now[:12]}, topic is {topic.decode()[:12]}; add_if_new(alias -> unborn) -> {add_ok}")
