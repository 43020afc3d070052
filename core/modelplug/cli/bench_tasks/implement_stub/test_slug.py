from slug import slugify


def test_slugify():
    assert slugify("Hello, World!") == "hello-world"
    assert slugify("  many   spaces  ") == "many-spaces"
    assert slugify("Already-a-slug") == "already-a-slug"
    assert slugify("C3PO & R2D2") == "c3po-r2d2"
