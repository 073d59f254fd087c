"""Math ops, one family a module; tfnb/ops/math_ops.py gathers their public names under TF's module name."""
