#!/usr/bin/env python3
"""A ref dulwich writes to an annotated tag is stored without its peeled value (value
type 1; git stores type 2), and dulwich's get_peeled then reports a type-1 record as
"known not to be a tag": Repo.get_peeled returns the tag's own id, not the commit.

Exit 1 while the defect shows.
"""
from _repo import dulwich_repo, reftable_repo, verdict

Repo, version = dulwich_repo()
git, gitdir = reftable_repo()
git.run("tag", "-a", "-m", "ann", "v1")
tag = git.out("rev-parse", "refs/tags/v1")
commit = git.out("rev-parse", "refs/tags/v1^{commit}")
r = Repo(gitdir)
r.refs.add_if_new(b"refs/tags/copy", tag.encode())
got = Repo(gitdir).get_peeled(b"refs/tags/copy").decode()
git_sees = git.out("for-each-ref", "--format=%(*objectname)", "refs/tags/copy")
verdict(got != commit,
        f"dulwich {version}: Repo.get_peeled(refs/tags/copy) = {got}; the tag peels to "
        f"{commit} (git: {git_sees})")
