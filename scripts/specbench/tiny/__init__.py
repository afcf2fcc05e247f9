"""Tiny random-weight checkpoints for testing the pipeline without real models.

Two Hugging Face layout checkpoint directories that llama.cpp's
``convert_hf_to_gguf.py`` converts like the real thing:

* a Qwen3.5 target (``Qwen3_5ForCausalLM``: gated-delta-net linear attention
  plus one full-attention layer, tied embeddings, the real 248,320-entry
  Qwen3.5 vocabulary and its chat template) with one MTP block stored under
  the real checkpoint's ``mtp.*`` names, so ``--spec-type draft-mtp`` works;
* a matching DFlash draft (``DFlashDraftModel``, Qwen3 layers, no embeddings
  or LM head: it shares the target's), converted with
  ``--target-model-dir <target>`` for ``--spec-type draft-dflash``.

Every target is stored in the files of the real Qwen/Qwen3.5-9B repository: ``config.json``, the real Qwen3.5
``chat_template.jinja`` (Apache-2.0, see ``qwen3_5_template``), ``tokenizer.json`` / ``vocab.json`` / ``merges.txt`` /
``tokenizer_config.json`` (``Qwen2Tokenizer``; 12 of the 33 added tokens, ``<think>`` among them, not special; the
split pattern without ``\\p{M}``), the weights in four shards ``model.safetensors-0000N-of-00004.safetensors`` and
their index, and no ``generation_config.json``. The DFlash draft is stored as the z-lab drafts are: ``block_size`` at
the top level, ``dflash_config.mask_token_id`` 248070.

Weights are random (numpy PCG64 seeded per tensor name), so the same seed
gives byte-identical files. Norm weights follow each architecture's
convention: Qwen3.5 stores RMSNorm weights as offsets from one (the converter
adds one), except the gated-delta-net output norm; Qwen3 stores them as is.
The embedding rows of special and unused token ids are zero, so their logits
are zero and greedy decoding never picks an end-of-generation token: a
request always generates its full ``n_predict``.

Kinds of target (``kind``):

* ``random`` (the default): the model above, unchanged. Its MTP block and any
  DFlash draft disagree with it: every draft is rejected.
* ``agree`` and ``half``: *constructed* weights with a chosen acceptance, stored
  the way the real Qwen/Qwen3.5-9B is (``Qwen3_5ForConditionalGeneration``: a
  nested ``text_config``, a (tiny) vision tower under ``model.visual.*``, the
  language model under ``model.language_model.*``, an untied ``lm_head`` and the
  MTP block under ``mtp.*``). Every attention, linear-attention and MLP output
  projection is zero, so the residual stream is the token embedding and the
  target's greedy next token is a fixed function f of the current token: a
  single cycle through ``CYCLE_LEN`` ordinary BPE tokens (every other token,
  special ones included, maps into the cycle; end-of-generation is never
  produced). The MTP block predicts f of the token it is given for all cycle
  tokens (``agree``) or for exactly half of them (``half``). A DFlash draft
  written for such a target predicts every position of its block (up to 15
  tokens) exactly. These acceptance rates are chosen by construction; they say
  nothing about how Qwen3.5 itself behaves.

Modules: ``layout`` (sizes, configs, tokenizer), ``qwen3_5_template`` (the chat template), ``weights`` (random tensors,
the sharded writer and readers), ``construction`` (the constructed target), ``dflash`` (the constructed DFlash draft),
``checkpoints`` (the writers and the command line).

CLI::

    python -m specbench.tiny target OUT [--seed N] [--kind {random,agree,half}]
    python -m specbench.tiny dflash OUT --target DIR [--seed N]
"""
