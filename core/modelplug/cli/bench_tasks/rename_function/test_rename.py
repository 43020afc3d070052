from pathlib import Path

HERE = Path(__file__).parent


def test_the_new_name_works_in_both_files():
    from geometry import rectangle_area
    from report import describe

    assert rectangle_area(2, 3) == 6
    assert describe(2, 3) == "2 x 3: area 6"


def test_the_old_name_is_gone():
    for name in ("geometry.py", "report.py"):
        assert "area_of" not in (HERE / name).read_text(), name
