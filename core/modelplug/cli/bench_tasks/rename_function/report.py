from geometry import area_of


def describe(width, height):
    """One line about a width by height rectangle."""
    return f"{width} x {height}: area {area_of(width, height)}"
