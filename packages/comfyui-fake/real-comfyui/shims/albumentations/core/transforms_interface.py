"""The one albumentations name insightface imports (see the package's docstring)."""


class ImageOnlyTransform:
    def __init__(self, always_apply=False, p=0.5):
        self.always_apply = always_apply
        self.p = p

    def __call__(self, *args, **kwargs):
        raise NotImplementedError("albumentations is a stand-in here: image augmentations are not available")
