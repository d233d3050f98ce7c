"""`g_pathmgr` for local paths only: what the segment-anything-2 pack calls (`g_pathmgr.open`)."""


class _LocalPathManager:
    @staticmethod
    def open(path, mode='r', **kwargs):
        return open(path, mode, **kwargs)

    @staticmethod
    def exists(path):
        import os
        return os.path.exists(path)


g_pathmgr = _LocalPathManager()
