-- The file a load_model stored for a model (the comfyui engine with COMFYUI_MODELS_DIR): its
-- sha256, computed while it was downloaded, and its size. Null for a model without a stored file.
ALTER TABLE models ADD COLUMN file_sha256 text, ADD COLUMN file_bytes bigint;
