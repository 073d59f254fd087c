"""Finds the packages: tfnb/ and its subpackages, and the folders installed under it (see pyproject.toml)."""

from setuptools import find_namespace_packages, find_packages, setup


def packages_in(folder: str, name: str) -> list[str]:
    """`name` and the subpackages of `folder`, which installs as `name` (data folders such as static/ too)."""
    return [name] + [f"{name}.{sub}" for sub in find_namespace_packages(folder, exclude=["*__pycache__*"])]


setup(packages=find_packages(include=["tfnb", "tfnb.*"])
      + packages_in("kernels", "tfnb.kernels") + packages_in("visualizer", "tfnb.visualizer"))
