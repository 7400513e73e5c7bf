"""Expertise files: per-domain working knowledge in `.expertise/<domain>.yaml`.

Nothing is imported here: `import lorebook` and the append path must not load ruamel.yaml. The
facade is `lorebook.expertise.api.Expertise`, reached as `Lorebook.expertise`.
"""
