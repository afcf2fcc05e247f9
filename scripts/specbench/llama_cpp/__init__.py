"""llama.cpp: its source tree at the pinned commit (source) and its CMake build and manifest (cmake)."""
