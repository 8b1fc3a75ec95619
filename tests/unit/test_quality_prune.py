from cairn.quality.report_folder import prune


def test_only_the_newest_report_folders_are_kept(tmp_path):
    for stamp in ("20260101T000000Z-a", "20260102T000000Z-b", "20260103T000000Z-c"):
        (tmp_path / stamp).mkdir()
        (tmp_path / stamp / "summary.json").write_text("{}")
    (tmp_path / "not-a-report").mkdir()  # never touched
    prune(tmp_path, 2)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["20260102T000000Z-b", "20260103T000000Z-c", "not-a-report"]
    prune(tmp_path, 0)
    assert len(list(tmp_path.iterdir())) == 3


def test_the_latest_link_is_never_counted_or_pruned_and_follows_the_newest(tmp_path):
    from cairn.quality.history import point_latest, trend

    for stamp in ("20260101T000000Z-a", "20260102T000000Z-b", "20260103T000000Z-c"):
        (tmp_path / stamp).mkdir()
        (tmp_path / stamp / "summary.json").write_text('{"success": true, "rows": 3, "results": [{"success": false}]}')
        point_latest(tmp_path / stamp)
    assert (tmp_path / "latest").resolve() == (tmp_path / "20260103T000000Z-c").resolve()
    prune(tmp_path, 2)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["20260102T000000Z-b", "20260103T000000Z-c", "latest"]
    points = trend(tmp_path, "20260104T000000Z-d", {"success": False, "rows": 5, "results": []}, limit=2)
    assert [(p["report"], p["failed"]) for p in points] == [("20260103T000000Z-c", 1), ("20260104T000000Z-d", 0)]


def test_plots_show_the_rows_the_size_expectations_check():
    import pandas as pd

    from cairn.quality.report_folder import checked_rows

    frame = pd.DataFrame(
        [
            {
                "chunk_type": "full_text",
                "token_count": 120,
                "whole_document": True,
                "is_remainder": False,
            },  # exempt: short doc
            {
                "chunk_type": "full_text",
                "token_count": 120,
                "whole_document": False,
                "is_remainder": False,
            },  # checked, under
            {"chunk_type": "full_text", "token_count": 500, "whole_document": True, "is_remainder": False},  # checked
            {
                "chunk_type": "child",
                "token_count": 10,
                "whole_document": False,
                "is_remainder": True,
            },  # exempt remainder
            {"chunk_type": "child", "token_count": 150, "whole_document": False, "is_remainder": False},
        ]
    )
    parents = checked_rows(frame[frame["chunk_type"] == "full_text"], "full_text", 400)
    children = checked_rows(frame[frame["chunk_type"] == "child"], "child", 400)
    assert parents["token_count"].tolist() == [120, 500] and children["token_count"].tolist() == [150]
