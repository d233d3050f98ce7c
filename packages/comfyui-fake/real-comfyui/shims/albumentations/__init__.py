"""Stand-in for albumentations (not in Debian, no wheel here), installed by install-insightface.sh.

insightface's `app/mask_renderer.py` (imported by `insightface.app`, hence by every `FaceAnalysis`
user) subclasses `albumentations.core.transforms_interface.ImageOnlyTransform` for its mask
augmentation, which nothing here uses; ReActor lists albumentations in its requirements but does
not import it. Only that base class is provided, and applying it says so.
"""
