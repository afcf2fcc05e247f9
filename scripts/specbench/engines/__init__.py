"""Engines other than llama.cpp that the workflow starts itself (vLLM): their environments."""
