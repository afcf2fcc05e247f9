"""Snakemake entry: inspect a GGUF, check quantization and MTP layer, write the model manifest."""

from pathlib import Path

from specbench.core.entry import fail, logged_to
from specbench.core.files import write_json_atomic
from specbench.models.verify import ModelCheckError, check_model, inspect_gguf

snakemake = globals()["snakemake"]
params = snakemake.params
with logged_to(snakemake.log[0]):
    try:
        info = inspect_gguf(Path(snakemake.input.gguf))
        info["source"] = params.source
        print({k: info[k] for k in ("path", "file_type_name", "tensor_count", "mtp", "size_bytes")})
        check_model(info, expected_file_type=params.expected_file_type, require_mtp=params.require_mtp)
    except ModelCheckError as error:
        fail(f"model '{snakemake.params.role}': {error}", snakemake.log[0])
    write_json_atomic(Path(snakemake.output[0]), info)
