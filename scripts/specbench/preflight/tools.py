"""The programs the planned llama.cpp fetch and build run: git (the git route), CMake, a C++ compiler and the
backend's toolkit (core/config/backends.py names the backends), each where the build's cmake_args name it, if they
do."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from specbench.core.config import builds as core_builds
from specbench.core.plan import rule_names
from specbench.preflight.writes import Job


@dataclass(frozen=True)
class Tool:
    """A program a planned job runs: found as one of ``names`` on PATH, at one of ``paths``, or through ``env``;
    ``cmake_var``: the CMake variable that names it, ``given``: the paths the build's cmake_args give it (first)."""

    name: str
    purpose: str
    names: tuple[str, ...]
    paths: tuple[str, ...] = ()
    env: str | None = None
    fix: str = ""
    cmake_var: str | None = None
    given: tuple[str, ...] = ()


def build_tools(config: Mapping[str, Any], jobs: Sequence[Job]) -> list[Tool]:
    """What the planned llama.cpp fetch and build run: git (the git route), CMake, a C++ compiler and the backend's
    toolkit (core/config/backends.py names the backends)."""
    rules = {rule for rule, _ in jobs}
    builds = core_builds.llama_builds(dict(config))
    tools: list[Tool] = []
    if git_urls(config, jobs):
        tools.append(GIT)
    if rule_names.LLAMA_CPP_BUILD not in rules:
        return tools
    tools.append(Tool("cmake", "configures the llama.cpp build", ("cmake",), fix="install CMake >= 3.18"))
    tools.append(
        Tool(
            "C++ compiler",
            "compiles llama.cpp",
            ("c++", "g++", "clang++"),
            env="CXX",
            fix="install gcc or clang",
            cmake_var="CMAKE_CXX_COMPILER",
        )
    )
    for backend in dict.fromkeys(b.llama_cpp["backend"] for b in builds):
        tool = BACKEND_TOOLS.get(backend)
        if tool is not None:
            tools.append(tool)
    cmake_args = [arg for b in builds for arg in b.llama_cpp["cmake_args"]]
    return [_named_in(tool, cmake_args) for tool in tools]


def git_urls(config: Mapping[str, Any], jobs: Sequence[Job]) -> list[str]:
    """The repositories the planned llama.cpp fetches clone: each build fetched by a planned ``llama_cpp_fetch`` job
    (its ``build_dir`` wildcard, '' for the one build) whose source is git."""
    fetched = {wildcards.get("build_dir", "") for rule, wildcards in jobs if rule == rule_names.LLAMA_CPP_FETCH}
    return list(
        dict.fromkeys(
            b.llama_cpp["git"]["url"]
            for b in core_builds.llama_builds(dict(config))
            if b.llama_cpp["source"] == "git" and b.suffix in fetched
        )
    )


def _named_in(tool: Tool, cmake_args: Sequence[str]) -> Tool:
    """The tool with the path its CMake variable is given in ``cmake_args`` (``-DVAR=path``, ``-DVAR:FILEPATH=...``)
    looked at first."""
    if tool.cmake_var is None:
        return tool
    pattern = re.compile(rf"^-D{re.escape(tool.cmake_var)}(?::[A-Z]+)?=(.+)$")
    named = [m.group(1) for m in map(pattern.match, cmake_args) if m]
    return replace(tool, given=tuple(named)) if named else tool


GIT = Tool("git", "clones llama.cpp (source: git)", ("git",), fix="install git")
BACKEND_TOOLS = {
    "cuda": Tool(
        "CUDA toolkit (nvcc)",
        "compiles the cuda build's kernels",
        ("nvcc",),
        ("/usr/local/cuda/bin/nvcc",),
        "CUDACXX",
        "install the CUDA toolkit (the driver alone has no nvcc) and put its bin/ on PATH, or set CUDACXX to nvcc",
        "CMAKE_CUDA_COMPILER",
    ),
    "hip": Tool(
        "ROCm (hipcc)",
        "compiles the hip build",
        ("hipcc",),
        ("/opt/rocm/bin/hipcc",),
        None,
        "install ROCm and put /opt/rocm/bin on PATH",
    ),
    "vulkan": Tool(
        "Vulkan shader compiler (glslc)",
        "compiles the vulkan build's shaders",
        ("glslc",),
        (),
        None,
        "install glslc (the shaderc package or the Vulkan SDK) with the Vulkan headers and loader",
        "Vulkan_GLSLC_EXECUTABLE",
    ),
    "metal": Tool(
        "Xcode command line tools",
        "compiles the metal build",
        ("xcrun",),
        (),
        None,
        "run xcode-select --install",
    ),
}
