"""Input of image files, TF1 style, run under TensorFlow and under tfnb: reading and decoding PNG and JPEG files,
resizing, dtype conversion, standardization, flips and crops, and the queue-based slice_input_producer."""

from __future__ import annotations

import io

import numpy as np
import pytest
from program_registry import (
    Programs,
    shapes,
    test_program_does_what_tensorflow_does,  # noqa: F401 (pytest collects it from here)
)
from program_registry import run as run_in_session

Image = pytest.importorskip("PIL.Image", reason="decoding images needs Pillow")

PROGRAMS = Programs()
program = PROGRAMS.register

RNG = np.random.RandomState(3)
PIXELS = RNG.randint(0, 256, (5, 7, 3)).astype(np.uint8)
IMAGES = RNG.uniform(0, 1, (2, 4, 6, 3)).astype(np.float32)


def encoded(pixels: np.ndarray, image_format: str) -> bytes:
    buffer = io.BytesIO()
    Image.fromarray(pixels).save(buffer, format=image_format)
    return buffer.getvalue()


PNG = encoded(PIXELS, "PNG")
GRAY_PNG = encoded(PIXELS[:, :, 0], "PNG")
JPEG = encoded(np.full((8, 8, 3), [200, 40, 90], np.uint8), "JPEG")


@program
def decode_png_in_every_channel_count(tf):
    images = [tf.image.decode_png(PNG), tf.image.decode_png(PNG, channels=1), tf.image.decode_png(GRAY_PNG),
              tf.image.decode_png(GRAY_PNG, channels=3), tf.image.decode_png(PNG, channels=4)]
    return shapes(*images), run_in_session(tf, images)


@program
def decode_jpeg_of_a_flat_color(tf):
    image = tf.image.decode_jpeg(JPEG, channels=3)
    return shapes(image), run_in_session(tf, image).shape


@program
def read_file_then_decode(tf):
    import tempfile
    with tempfile.TemporaryDirectory() as folder:
        path = f"{folder}/picture.png"
        with open(path, "wb") as file:
            file.write(PNG)
        return run_in_session(tf, tf.image.decode_png(tf.read_file(path)))


@program
def read_file_of_a_missing_file_fails(tf):
    return run_in_session(tf, tf.read_file("/nonexistent/picture.png"))


@program
def resize_images_bilinear_and_nearest(tf):
    image = tf.constant(PIXELS)
    resized = [tf.image.resize_images(image, [3, 10]),
               tf.image.resize_images(image, [8, 4], method=tf.image.ResizeMethod.NEAREST_NEIGHBOR),
               tf.image.resize_images(tf.constant(IMAGES), [7, 3], align_corners=True),
               tf.image.resize_images(tf.constant(IMAGES), [2, 9], method=1, align_corners=True)]
    return [str(r.dtype) for r in resized], shapes(*resized), run_in_session(tf, resized)


@program
def resize_bilinear_gradient(tf):
    images = tf.constant(IMAGES)
    resized = tf.image.resize_bilinear(images, [5, 4])
    return run_in_session(tf, tf.gradients(tf.reduce_sum(resized * resized), images)[0])


@program
def convert_image_dtype_both_ways(tf):
    image = tf.constant(PIXELS)
    as_float = tf.image.convert_image_dtype(image, tf.float32)
    back = tf.image.convert_image_dtype(as_float, tf.uint8)
    wide = tf.image.convert_image_dtype(image, tf.int32)
    return run_in_session(tf, [as_float, back, wide, tf.image.convert_image_dtype(tf.constant([1.5, -0.2]), tf.uint8,
                                                                                  saturate=True)])


@program
def per_image_standardization_of_one_and_a_batch(tf):
    return run_in_session(tf, [tf.image.per_image_standardization(tf.constant(PIXELS)),
                               tf.image.per_image_standardization(tf.constant(IMAGES)),
                               tf.image.per_image_standardization(tf.zeros([2, 2, 1]))])


@program
def flips(tf):
    image = tf.constant(PIXELS)
    return run_in_session(tf, [tf.image.flip_left_right(image), tf.image.flip_up_down(image),
                               tf.image.flip_left_right(tf.constant(IMAGES))])


@program
def random_flip_gives_the_image_or_its_mirror(tf):
    image = tf.constant(PIXELS)
    flipped = tf.image.random_flip_left_right(image)
    upside = tf.image.random_flip_up_down(tf.constant(IMAGES))
    with tf.Session() as sess:
        seen = [sess.run(flipped) for _ in range(20)]
        batches = [sess.run(upside) for _ in range(5)]
    mirrored = {bool(np.array_equal(s, PIXELS[:, ::-1])) for s in seen}
    same_or_mirror = all(np.array_equal(s, PIXELS) or np.array_equal(s, PIXELS[:, ::-1]) for s in seen)
    per_image = all(np.array_equal(b[i], IMAGES[i]) or np.array_equal(b[i], IMAGES[i, ::-1]) for b in batches
                    for i in range(2))
    return shapes(flipped, upside), same_or_mirror, sorted(mirrored), per_image


@program
def random_crop_is_a_window(tf):
    crop = tf.random_crop(tf.constant(PIXELS), [3, 4, 3])
    with tf.Session() as sess:
        windows = [sess.run(crop) for _ in range(10)]
    found = all(any(np.array_equal(w, PIXELS[i:i + 3, j:j + 4]) for i in range(3) for j in range(4)) for w in windows)
    return shapes(crop), found


@program
def slice_input_producer_and_batch(tf):
    names = tf.constant(["a", "b", "c", "d"])
    values = tf.constant([1, 2, 3, 4])
    name, value = tf.train.slice_input_producer([names, values], num_epochs=2, shuffle=False)
    names_batch, values_batch = tf.train.batch([name, value], batch_size=3)
    out = []
    with tf.Session() as sess:
        sess.run(tf.local_variables_initializer())
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(sess, coord)
        try:
            for _ in range(4):
                out.append(sess.run([names_batch, values_batch]))
        except tf.errors.OutOfRangeError:
            out.append("end")
        coord.request_stop()
        coord.join(threads)
    return shapes(name, value, names_batch), out


@program
def slice_input_producer_shuffles_within_an_epoch(tf):
    values = tf.constant(np.arange(8))
    [value] = tf.train.slice_input_producer([values], num_epochs=1, seed=3)
    with tf.Session() as sess:
        sess.run(tf.local_variables_initializer())
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(sess, coord)
        seen = [int(sess.run(value)) for _ in range(8)]
        coord.request_stop()
        coord.join(threads)
    return sorted(seen)
