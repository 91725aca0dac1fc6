"""The ``ragwright`` command end to end, with the real default embedder."""

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from ragwright.cli import main


def run(*args: str, ok: bool = True, code: int = 0) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    if ok:
        assert result.exit_code == code, result.output + result.stderr
    return result.exit_code, result.stdout, result.stderr


def as_json(*args: str, code: int = 0) -> dict:  # type: ignore[type-arg]
    """The JSON output of a command that exits with *code* (1: `ingest` with a failed document)."""
    _, out, _ = run("--json", *args, code=code)
    return json.loads(out)  # type: ignore[no-any-return]


@pytest.mark.slow
def test_ingest_search_ask_reopen_remove(tmp_path: Path, shared: Path) -> None:
    docs = tmp_path / "md"
    shutil.copytree(shared / "docs-corpus" / "md", docs)
    store = str(tmp_path / "store.db")

    report = as_json("--store", store, "ingest", str(docs))
    assert set(report) >= {"added", "updated", "unchanged", "deleted", "failed", "chunks", "seconds"}
    assert report["added"] == 3 and report["failed"] == [] and report["chunks"] > 3

    again = as_json("--store", store, "ingest", str(docs))  # a new process would reopen the file the same way
    assert (again["added"], again["unchanged"], again["chunks"]) == (0, 3, 0)

    found = as_json("--store", store, "search", "steps to reproduce the bug", "--top-k", "3")["results"]
    assert len(found) == 3
    assert set(found[0]) == {"chunk_id", "document_id", "score", "text", "section_path", "page", "arms", "scanned"}
    assert found[0]["scanned"] is False
    assert found[0]["document_id"].endswith("bug_report.md")
    assert {"dense", "bm25"} <= set(found[0]["arms"])  # both arms found it; fused by convex combination

    answer = as_json("--store", store, "ask", "Where did IBM originate?")
    assert set(answer) >= {"answer", "declined", "citations", "sources"}
    assert not answer["declined"] and "[Source" in answer["answer"]
    assert any(c["document_id"].endswith("wiki.md") for c in answer["citations"])

    declined = as_json("--store", store, "ask", "What is the boiling point of liquid nitrogen on Mars?")
    assert declined["declined"] and declined["citations"] == []

    status = as_json("--store", store, "status")
    assert (status["indexed"], status["failed"]) == (3, 0) and status["chunks"] > 3

    doc_id = found[0]["document_id"]
    removed = as_json("--store", store, "remove", doc_id)
    assert removed["chunks_removed"] > 0
    after = as_json("--store", store, "search", "steps to reproduce the bug", "--top-k", "10")["results"]
    assert all(r["document_id"] != doc_id for r in after)
    assert as_json("--store", store, "status")["deleted"] == 1

    (docs / "wiki.md").unlink()
    assert as_json("--store", store, "ingest", str(docs))["deleted"] == 0
    synced = as_json("--store", store, "ingest", str(docs), "--sync")
    assert synced["deleted"] == 1
    assert as_json("--store", store, "status", "--check")["problems"] == []
    listed = as_json("--store", store, "status", "--documents", "deleted")["matching_documents"]
    assert {Path(d["document_id"]).name for d in listed} == {"wiki.md"}  # bug_report.md came back with the folder
    hidden = as_json("--store", store, "acl", str(docs / "codeblock.md"), "--group", "admins")
    assert hidden["chunks_updated"] > 0
    found = as_json("--store", store, "search", "code block", "--top-k", "10")["results"]
    assert found and all(not r["document_id"].endswith("codeblock.md") for r in found)


@pytest.mark.slow
def test_quickstart_prints_two_cited_answers() -> None:
    payload = as_json("quickstart")
    assert payload["ingest"]["added"] == 4 and payload["ingest"]["failed"] == []
    first, second = payload["answers"]
    assert not first["declined"] and "30 days" in first["answer"] and "[Source" in first["answer"]
    assert not second["declined"] and "AES-256" in second["answer"]
    _, human, _ = run("quickstart")
    assert human.count("[Source") >= 2


def test_unreadable_path_is_one_clear_line(tmp_path: Path) -> None:
    code, _, err = run("--store", str(tmp_path / "s.db"), "ingest", str(tmp_path / "nope"), ok=False)
    assert code == 2 and err.strip().count("\n") == 0
    assert err.startswith("error:") and "no such file or folder" in err and "Traceback" not in err
    assert not (tmp_path / "s.db").exists()


def test_unknown_and_invalid_options(tmp_path: Path) -> None:
    code, _, err = run("search", "x", "--topk", "3", ok=False)
    assert code == 2 and "No such option" in err
    store = tmp_path / "s.db"
    # the folder's empty __init__.py fails ("the file is empty"): exit status 1
    run("--store", str(store), "--embedder", "wordllama", "ingest", str(Path(__file__).parent / "parse"), code=1)
    code, _, err = run("--store", str(store), "search", "x", "--top-k", "0", ok=False)
    assert code == 2 and "top_k=0 is invalid" in err and err.count("\n") == 1


def test_corrupt_store_is_refused_and_kept(tmp_path: Path) -> None:
    store = tmp_path / "s.db"
    store.write_bytes(b"garbage" * 1000)
    code, _, err = run("--store", str(store), "status", ok=False)
    assert code == 2 and "not a readable ragwright store" in err and err.count("\n") == 1
    code, _, err = run("--store", str(store), "ingest", str(tmp_path), ok=False)
    assert code == 2
    assert store.read_bytes() == b"garbage" * 1000


def test_missing_store_for_search(tmp_path: Path) -> None:
    code, _, err = run("--store", str(tmp_path / "none.db"), "search", "x", ok=False)
    assert code == 2 and "ingest something first" in err


def test_bad_filter_syntax(tmp_path: Path) -> None:
    code, _, err = run("--store", str(tmp_path / "s.db"), "search", "x", "--filter", "novalue", ok=False)
    assert code == 2 and "key=value" in err


def test_eval_prints_cis_and_writes_a_report(tmp_path: Path) -> None:
    from tests.eval.test_runner import make_beir

    data = make_beir(tmp_path / "toy")
    report_dir = tmp_path / "report"
    args = ["--embedder", "wordllama", "eval", str(data), "--config", "dense", "--config", "dense+top_k=3"]
    args += ["--eval-store", str(tmp_path / "eval.db"), "--report", str(report_dir)]
    payload = as_json(*args)
    assert [c["name"] for c in payload["configs"]] == ["dense", "dense+top_k=3"]
    ndcg = payload["configs"][0]["metrics"]["ndcg@10"]
    assert set(ndcg) >= {"mean", "ci_low", "ci_high"} and ndcg["ci_low"] <= ndcg["mean"] <= ndcg["ci_high"]
    assert "versus_baseline" in payload["configs"][1]
    assert (report_dir / "report.html").is_file()
    _, text, _ = run(*args)
    assert "ndcg@10" in text and "baseline" in text
    code, _, err = run("--embedder", "wordllama", "eval", str(data), "--config", "nonsense", ok=False)
    assert code == 2 and "unknown config preset" in err


def test_parse_prints_the_tree_and_json(shared: Path) -> None:
    wiki = str(shared / "docs-corpus" / "md" / "wiki.md")
    _, text, _ = run("parse", wiki)
    assert "heading h1: IBM" in text
    doc = as_json("parse", wiki)
    assert doc["title"] == "IBM" and doc["elements"][0] == {
        "kind": "heading",
        "text": "IBM",
        "level": 1,
        "page": None,
        "attributes": {},
    }
    code, _, err = run("parse", str(shared / "docs-corpus" / "hostile" / "zipbomb_1G.zip"), ok=False)
    assert code == 2 and err.count("\n") == 1 and "ZIP archive" in err


def test_bad_reranker_is_refused_up_front(tmp_path: Path) -> None:
    store = tmp_path / "s.db"
    # the folder's empty __init__.py fails ("the file is empty"): exit status 1
    run("--store", str(store), "--embedder", "wordllama", "ingest", str(Path(__file__).parent / "parse"), code=1)
    code, _, err = run("--store", str(store), "--reranker", str(tmp_path / "nope"), "search", "x", ok=False)
    assert code == 2 and err.count("\n") == 1 and "reranker" in err.lower()


@pytest.mark.slow
def test_ingest_the_whole_docs_corpus(tmp_path: Path, shared: Path) -> None:
    """Every format end to end: what can be read is indexed, the rest is dead-lettered with its reason."""
    store = str(tmp_path / "store.db")
    report = as_json("--store", store, "--embedder", "wordllama", "ingest", str(shared / "docs-corpus"), code=1)
    failed = {Path(f["document"]).name: f["reason"] for f in report["failed"]}
    expected = {
        "fake-encrypted.msg": "encrypted",
        "OOM_alloc.xls": "legacy Excel",
        "zipbomb_1G.zip": "ZIP archive",
        "empty.pdf": "empty",
        "imagemagick-CCITTFaxDecode.pdf": "probably scanned",
        "libreoffice-writer-password.pdf": "encrypted",
        "password-example.pdf": "encrypted",
        "pass_protected.xlsx": "encrypted",
        "password_protected.xlsx": "encrypted",
    }
    assert set(failed) == set(expected)
    for name, word in expected.items():
        assert word in failed[name], (name, failed[name])
    assert report["added"] >= 60
    facts = {
        "Swimming in the lake": "word_sample.docx",
        "Maple Leafs": "stanley-cups.xlsx",
        "Test Table Slide": "powerpoint_sample.pptx",
        "Roses are red": "fake-email-malformed-encoding.eml",
        "Row and Column Access Control": "redp5110_sampled.pdf",
        "Wyoming": "nics-background-checks-2015-11.pdf",
        "Rotary Potentiometer": "unreadablemetadata.pdf",  # recovered through pypdf (issue 26)
    }
    for query, name in facts.items():
        hits = as_json("--store", store, "--embedder", "wordllama", "search", query, "--mode", "bm25", "--top-k", "5")
        assert any(Path(h["document_id"]).name == name for h in hits["results"]), (query, hits["results"][:2])
    assert as_json("--store", store, "--embedder", "wordllama", "status", "--check")["problems"] == []


def test_tenant_and_groups_set_the_acl_on_ingest_and_the_identity_on_search_and_ask(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "salaries.md").write_text("# Salaries\n\nThe salary bands for engineers were raised in March.\n")
    store = str(tmp_path / "store.db")
    flags = ("--store", store, "--embedder", "wordllama")
    assert as_json(*flags, "ingest", str(docs), "--tenant", "acme", "--groups", "hr, finance")["added"] == 1

    def found(*who: str) -> list[str]:
        hits = as_json(*flags, "search", "salary bands engineers", *who)["results"]
        return [h["document_id"] for h in hits]

    assert found() == []  # no identity: public content of the default tenant only
    assert found("--tenant", "acme") == []  # the tenant alone is not enough: the ACL names groups
    assert found("--tenant", "globex", "--groups", "hr") == []
    assert found("--tenant", "acme", "--groups", "finance") and found("--tenant", "acme", "--groups", "eng,hr")
    assert as_json(*flags, "ask", "What happened to salary bands?")["sources"] == []
    answer = as_json(*flags, "ask", "What happened to salary bands?", "--tenant", "acme", "--groups", "hr")
    assert answer["sources"] and all(s["document_id"].endswith("salaries.md") for s in answer["sources"])


def test_a_failed_document_keeps_the_tenant_and_groups_it_was_ingested_with(tmp_path: Path) -> None:
    """Issue 21 #1: `ingest bad.pdf --tenant beta --groups hr` on a corrupt PDF stored it as default|["*"]."""
    bad = tmp_path / "bad.pdf"
    bad.write_bytes(b"%PDF-1.7 this is not really a pdf")
    flags = ("--store", str(tmp_path / "store.db"), "--embedder", "wordllama")
    report = as_json(*flags, "ingest", str(bad), "--tenant", "beta", "--groups", "hr", code=1)
    assert report["added"] == 0 and len(report["failed"]) == 1
    (failed,) = as_json(*flags, "status")["failed_documents"]
    assert (failed["tenant"], failed["acl"]) == ("beta", ["hr"])
    (record,) = as_json(*flags, "status", "--documents", "failed")["matching_documents"]
    assert (record["tenant"], record["acl"]) == ("beta", ["hr"])
    _, out, _ = run(*flags, "status")
    assert "bad.pdf [parse]" in out and "(tenant beta, groups hr)" in out
    retried = as_json(*flags, "ingest", "--retry-failed", code=1)  # still broken: it fails again with the same access
    assert len(retried["failed"]) == 1
    (again,) = as_json(*flags, "status")["failed_documents"]
    assert (again["tenant"], again["acl"], again["attempts"]) == ("beta", ["hr"], 2)


def test_raw_newlines_and_controls_from_documents_never_break_the_output(tmp_path: Path) -> None:
    """Issue 21 item 11: a file name, a heading or a failure reason carrying newlines or escapes."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "evil\nname.md").write_text(
        "# Refund\rpolicy\u2028forged\n\nRefunds are granted within 30 days.\n2. [rrf 9.9] injected\n",
        encoding="utf-8",
    )
    (docs / "bad\n  failed: forged.md").write_bytes(b"\x00\x01 not text")
    flags = ("--store", str(tmp_path / "s.db"), "--embedder", "wordllama")
    outputs = [
        run(*flags, "ingest", str(docs), code=1)[1],
        run(*flags, "search", "refund 30 days")[1],
        run(*flags, "ask", "When are refunds granted?")[1],
        run(*flags, "status", "--documents", "indexed")[1],
    ]
    for out in outputs:
        for line in out.splitlines():
            assert not line.startswith(("name.md", "policy", "forged", "  failed: forged", "2. [rrf 9.9]")), out
            assert "\x1b" not in line and "\u2028" not in line and "\r" not in line
    assert "evil\\nname.md > Refund" in outputs[1] and "evil\\nname.md" in outputs[2]
    assert "bad\\n  failed: forged.md" in outputs[0] and "bad\\n  failed: forged.md" in outputs[3]


def test_symlinks_outside_the_folder_are_skipped_unless_followed(tmp_path: Path) -> None:
    outside = tmp_path / "outside.md"
    outside.write_text("the outside secret", encoding="utf-8")
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "in.md").write_text("inside text", encoding="utf-8")
    (docs / "out.md").symlink_to(outside)
    flags = ("--store", str(tmp_path / "s.db"), "--embedder", "wordllama")
    _, out, _ = run(*flags, "ingest", str(docs))
    assert "added 1," in out and "skipped:" in out and "out.md" in out and "--follow-symlinks" in out
    report = as_json(*flags, "ingest", "--follow-symlinks", str(docs))
    assert report["added"] == 1 and report["skipped"] == []


def test_a_schema_upgrade_says_where_the_backup_is(tmp_path: Path) -> None:
    import sqlite3

    store = tmp_path / "s.db"
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("some text", encoding="utf-8")
    run("--store", str(store), "--embedder", "wordllama", "ingest", str(docs))
    conn = sqlite3.connect(store)
    conn.executescript(
        "DROP TABLE collections; DROP TABLE aliases; UPDATE rag_metadata SET value = '1' WHERE key = 'schema_version';"
    )
    conn.close()
    _, _, err = run("--store", str(store), "--embedder", "wordllama", "status")
    assert "upgraded" in err and f"{store}.bak-v1" in err and Path(f"{store}.bak-v1").is_file()
    _, _, err = run("--store", str(store), "--embedder", "wordllama", "status")
    assert "upgraded" not in err


def test_ingest_exits_1_when_a_document_failed_after_a_summary_line(tmp_path: Path) -> None:
    """Issue 22: `ingest` exited 0 with most files dead-lettered; scripts could not tell."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "good.md").write_text("# Good\n\nA readable note.\n", encoding="utf-8")
    flags = ("--store", str(tmp_path / "s.db"), "--embedder", "wordllama")
    assert run(*flags, "ingest", str(docs))[0] == 0  # every document succeeded: 0
    (docs / "bad.pdf").write_bytes(b"%PDF-1.7 not really a pdf")
    _, out, _ = run(*flags, "ingest", str(docs), code=1)
    lines = out.strip().splitlines()
    assert "failed: " in lines[0] and "bad.pdf" in lines[0]
    assert lines[-1].startswith("added 0, updated 0, unchanged 1, deleted 0, failed 1;")  # the summary ends it
    assert as_json(*flags, "ingest", str(docs), code=1)["failed"][0]["document"].endswith("bad.pdf")


def test_an_empty_folder_says_so(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    _, out, err = run("--store", str(tmp_path / "s.db"), "--embedder", "wordllama", "ingest", str(empty))
    assert "holds no file to ingest" in err and "added 0" in out


def test_global_options_after_the_subcommand(tmp_path: Path, shared: Path) -> None:
    """Issue 22: `ragwright search "x" --json`, `ingest DIR --store s.db`, `parse FILE --json` said "No such option"."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "refunds.md").write_text("# Refunds\n\nRefunds are granted within 30 days.\n", encoding="utf-8")
    store = str(tmp_path / "s.db")
    report = json.loads(run("ingest", str(docs), "--store", store, "--embedder", "wordllama", "--json")[1])
    assert report["added"] == 1 and Path(store).is_file()
    found = json.loads(run("search", "refund window", "--json", "--store", store, "--embedder", "wordllama")[1])
    assert found["results"][0]["document_id"].endswith("refunds.md")
    status = json.loads(run("--store", str(tmp_path / "other.db"), "status", "--store", store, "--json")[1])
    assert status["indexed"] == 1  # given after the subcommand, it wins
    parsed = json.loads(run("parse", str(shared / "docs-corpus" / "md" / "wiki.md"), "--json")[1])
    assert parsed["elements"]
    code, _, err = run("search", "x", "--topk", "3", ok=False)
    assert code == 2 and "No such option" in err  # a real typo is still one


def test_ingest_password_and_password_map(tmp_path: Path, shared: Path) -> None:
    pdfs = shared / "docs-corpus" / "pdf"
    flags = ("--store", str(tmp_path / "s.db"), "--embedder", "wordllama")
    locked = str(pdfs / "libreoffice-writer-password.pdf")
    assert "encrypted" in as_json(*flags, "ingest", locked, code=1)["failed"][0]["reason"]
    assert as_json(*flags, "ingest", locked, "--password", "openpassword")["added"] == 1
    passwords = tmp_path / "passwords.json"
    passwords.write_text(json.dumps({"password-*.pdf": "test"}), encoding="utf-8")
    report = as_json(*flags, "ingest", str(pdfs / "password-example.pdf"), "--passwords", str(passwords))
    assert report["added"] == 1 and report["failed"] == []


def test_unknown_filter_keys_warn_with_the_keys_that_exist(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("# Policy\n\nRefunds within 30 days.\n", encoding="utf-8")
    flags = ("--store", str(tmp_path / "s.db"), "--embedder", "wordllama")
    run(*flags, "ingest", str(docs), "--meta", "department=support")
    _, out, err = run(*flags, "search", "refunds", "--filter", "departmnet=support")
    assert "no results" in out
    assert "'departmnet' (did you mean 'department'?)" in err and "keys that exist:" in err and "file_name" in err
    _, out, err = run(*flags, "search", "refunds", "--filter", "department=support")
    assert "warning" not in err and "a.md" in out


def test_status_lists_each_failure_once(tmp_path: Path) -> None:
    (tmp_path / "bad.pdf").write_bytes(b"%PDF-1.7 not really a pdf")
    flags = ("--store", str(tmp_path / "s.db"), "--embedder", "wordllama")
    run(*flags, "ingest", str(tmp_path / "bad.pdf"), code=1)
    for extra in ((), ("--documents", "failed")):
        _, out, _ = run(*flags, "status", *extra)
        assert out.count("bad.pdf") == 1, out


def test_new_groups_on_an_unchanged_file_update_its_access_without_embedding(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "pay.md").write_text("# Pay\n\nThe salary bands were raised in March.\n", encoding="utf-8")
    flags = ("--store", str(tmp_path / "s.db"), "--embedder", "wordllama")
    as_json(*flags, "ingest", str(docs), "--tenant", "acme", "--groups", "hr")
    report = as_json(*flags, "ingest", str(docs), "--tenant", "acme", "--groups", "finance")
    assert (report["added"], report["updated"], report["access_updated"], report["chunks"]) == (0, 0, 1, 0)
    assert report["tokens_embedded"] == 0
    hits = as_json(*flags, "search", "salary bands", "--tenant", "acme", "--groups", "finance")["results"]
    assert hits and hits[0]["document_id"].endswith("pay.md")
    assert as_json(*flags, "search", "salary bands", "--tenant", "acme", "--groups", "hr")["results"] == []


def test_broken_pipe_exits_quietly(tmp_path: Path) -> None:
    """Issue 22: `ragwright status | head` printed "error: Broken pipe"."""
    import subprocess
    import sys

    docs = tmp_path / "docs"
    docs.mkdir()
    for n in range(300):
        (docs / f"note{n:03d}.md").write_text(f"note {n}", encoding="utf-8")
    flags = ["--store", str(tmp_path / "s.db"), "--embedder", "wordllama"]
    run(*flags, "ingest", str(docs))
    cmd = [sys.executable, "-m", "ragwright.cli", *flags, "status", "--documents", "indexed"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.readline()
    proc.stdout.close()  # the reader goes away, as `head -1` does
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=60) == 0 and err == ""


def test_debug_shows_ragwright_logs_not_the_libraries(tmp_path: Path) -> None:
    import subprocess
    import sys

    code = (
        "import logging, sys, traceback\n"
        "from ragwright.cli import main\n"
        "try:\n"
        "    main(['--store', sys.argv[1], 'status', '--debug'])\n"
        "except BaseException:\n"
        "    traceback.print_exc()\n"
        "logging.getLogger('ragwright.probe').debug('ours')\n"
        "logging.getLogger('PIL.Image').debug('third-party flood')\n"
        "logging.getLogger('urllib3').warning('third-party warning')\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path / "none.db")], capture_output=True, text=True, timeout=60
    )
    assert "DEBUG ragwright.probe: ours" in out.stderr
    assert "third-party flood" not in out.stderr and "third-party warning" in out.stderr
    assert "Traceback" in out.stderr  # --debug after the subcommand shows the traceback of "no store"


def test_ctrl_c_during_ingest_keeps_the_finished_documents(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 22: Ctrl-C threw away finished documents and said only "error: aborted"."""
    import os
    import signal

    import ragwright.sources
    from tests.ingest.test_pipeline import _docs, _Interrupting

    source = _Interrupting(_docs(8), 4, lambda: os.kill(os.getpid(), signal.SIGINT))
    monkeypatch.setattr(ragwright.sources, "open_source", lambda *a, **k: source)
    flags = ("--store", str(tmp_path / "s.db"), "--embedder", "wordllama")
    code, _, err = run(*flags, "ingest", "anything", ok=False)
    assert code == 130 and "interrupted:" in err and "documents written before Ctrl-C were kept" in err
    written = as_json(*flags, "status")["indexed"]
    assert f"interrupted: {written} documents" in err and written <= 3
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # put back
