from cairn.quality.report import prune


def test_only_the_newest_report_folders_are_kept(tmp_path):
    for stamp in ("20260101T000000Z-a", "20260102T000000Z-b", "20260103T000000Z-c"):
        (tmp_path / stamp).mkdir()
        (tmp_path / stamp / "summary.json").write_text("{}")
    (tmp_path / "not-a-report").mkdir()  # never touched
    prune(tmp_path, 2)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["20260102T000000Z-b", "20260103T000000Z-c", "not-a-report"]
    prune(tmp_path, 0)
    assert len(list(tmp_path.iterdir())) == 3
