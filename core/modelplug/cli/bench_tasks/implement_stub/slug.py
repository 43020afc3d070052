def slugify(text):
    """The text lowercased, each run of characters other than ASCII letters and digits
    replaced by one hyphen, and no hyphen at either end: "Hello, World!" -> "hello-world".
    """
    raise NotImplementedError
