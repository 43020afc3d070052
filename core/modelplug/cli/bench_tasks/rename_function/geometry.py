def area_of(width, height):
    """The area of a width by height rectangle."""
    return width * height
