"""Stand-in for iopath (not in Debian, no wheel here), installed by install-packs.sh.

The segment-anything-2 pack imports `iopath.common.file_io.g_pathmgr` at module level and uses it
only to open a local weights file (Hiera's optional `weights_path`); this provides exactly that.
"""
