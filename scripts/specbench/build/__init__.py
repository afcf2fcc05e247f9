"""Build: the llama.cpp source tree at the pinned commit (source) and its CMake build and manifest (cmake)."""
