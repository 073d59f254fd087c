"""Host memory from step to step: glibc's malloc raised, once per process, to the thresholds it adapts to by itself.

glibc's malloc maps an allocation above its mmap threshold fresh from the system (its pages fault in as they are
first written), and hands the top of its heap back to the system once more than its trim threshold lies free
there. Both thresholds start at 128 KiB and rise when a mapped block is freed, to that block's size and twice it,
up to 32 and 64 MiB on 64-bit systems. How a process's steps are served therefore depends on the
largest block it happened to free before them:

- A step that frees more than the trim threshold at once (an LSTM's per-time-step values, released at the end of
  its backward pass) has that memory handed back at its end, and faults it in again in the next step.
- The LSTM benchmark's step frees about 18 MB so. In processes whose history left the threshold below that
  (started with a few more environment variables, as `make bench` started them after importing TensorFlow), it
  made 5,800 minor page faults a step and took 1.36-1.50x the time of a process whose history had raised it
  (alternating turns of the two processes). Both run alike once the thresholds are raised.

Setting a threshold (mallopt, or glibc's MALLOC_*_ environment variables) turns that adaptation off, and the
mmap threshold stays where it was then: at 128 KiB in a young process, every larger array would be mapped fresh.
So tfnb allocates and frees one block of the largest size that adapts them: the thresholds go where a
long-running process's would, and glibc keeps adapting. A process whose environment sets the thresholds keeps
them. Other allocators ignore the freed block.
"""

from __future__ import annotations

import functools

import numpy as np

# The largest block whose freeing raises glibc's thresholds: DEFAULT_MMAP_THRESHOLD_MAX (32 MiB on 64-bit systems),
# which a mapped block's size field must not exceed with its flag bits set, less the page that rounds a request up.
_ADAPTING_BLOCK_BYTES = (32 << 20) - (2 << 12)


@functools.cache
def raise_malloc_thresholds() -> None:
    """Raises glibc malloc's mmap and trim thresholds to the highest values they adapt to (32 and 64 MiB), as
    freeing a block of that size does; once per process. The block's pages are never touched."""
    np.empty(_ADAPTING_BLOCK_BYTES, np.uint8)
