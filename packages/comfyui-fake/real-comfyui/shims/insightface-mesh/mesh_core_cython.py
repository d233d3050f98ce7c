"""Stand-in for insightface's compiled face3d mesh renderer, installed by install-insightface.sh.

`insightface/__init__.py` imports `thirdparty.face3d.mesh`, which imports this Cython extension at
module level, but only the 3D mask renderer calls it; face detection, recognition, landmarks and
the swapper never do. Building it would need a C++ toolchain and Cython in the chroot, so this
module takes its place and raises if a renderer function is ever called.
"""


def _unavailable(*args, **kwargs):
    raise NotImplementedError("insightface's face3d mesh renderer is not built here")


get_normal_core = _unavailable
rasterize_triangles_core = _unavailable
render_colors_core = _unavailable
render_texture_core = _unavailable
write_obj_with_colors_texture_core = _unavailable
