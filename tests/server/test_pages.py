"""The author pages over real HTTP, without a browser: the session cookie and its flags, CSRF on
every form (a forged upload never reaches the backend), logout ending the session, the login
rate limit, escaping of everything an author or a bot wrote, and one author's pages never
showing another's versions or logs. tests/server/test_browser.py drives the same pages in
Chromium."""

from __future__ import annotations

import re
from pathlib import Path

import httpx

from referee.hosting.upload import pack
from tests.server.conftest import ANN_TOKEN, BO_TOKEN, GAME, Served, make_fake
from ttr_arena.server.app import WebSettings, make_app, running

ROOT = Path(__file__).resolve().parents[2]
RANDOM = ROOT / "sample_bots" / "random"
_CSRF = re.compile(r'name="csrf" value="([^"]+)"')


def csrf_of(html: str) -> str:
    found = _CSRF.search(html)
    assert found, html
    return found[1]


def log_in(client: httpx.Client, token: str) -> httpx.Response:
    form = client.get("/login")
    assert form.status_code == 200
    return client.post("/login", data={"csrf": csrf_of(form.text), "token": token})


def test_logging_in_sets_a_strict_session_cookie_and_logging_out_ends_it(served: Served) -> None:
    with httpx.Client(base_url=served.url) as client:
        answer = log_in(client, ANN_TOKEN)
        assert answer.status_code == 303 and answer.headers["location"] == "/me"
        cookie = next(c for c in answer.headers.get_list("set-cookie") if "ttr_session=" in c)
        flags = {part.strip().lower() for part in cookie.split(";")}
        assert {"httponly", "samesite=strict", "path=/"} <= flags and "secure" not in flags
        session_id = cookie.split(";")[0].split("=", 1)[1]
        assert len(session_id) >= 43  # 32 random bytes, base64
        assert ANN_TOKEN not in cookie

        me = client.get("/me")
        assert me.status_code == 200 and "ann: your versions" in me.text
        assert ANN_TOKEN not in me.text

        # logout without its CSRF token: refused, still logged in
        assert client.post("/logout", data={}).status_code == 403
        assert client.get("/me").status_code == 200
        out = client.post("/logout", data={"csrf": csrf_of(me.text)})
        assert out.status_code == 303 and out.headers["location"] == "/login"
    # the old cookie, replayed, is no session any more
    with httpx.Client(base_url=served.url, cookies={"ttr_session": session_id}) as replay:
        assert replay.get("/me").status_code == 303


def test_the_cookie_is_secure_when_the_settings_say_so(tmp_path: Path, league_store: Path) -> None:
    app = make_app(make_fake(tmp_path, league_store), WebSettings(secure_cookies=True))
    with running(app) as url, httpx.Client(base_url=url) as client:
        form = client.get("/login")
        assert "secure" in form.headers["set-cookie"].lower()
        # httpx keeps a Secure cookie for https only: send the login cookie by hand
        client.cookies.set("ttr_login", form.cookies["ttr_login"])
        answer = client.post("/login", data={"csrf": csrf_of(form.text), "token": ANN_TOKEN})
        assert answer.status_code == 303
        assert "; secure" in answer.headers["set-cookie"].lower()


def test_a_forged_form_without_its_csrf_token_is_403_and_submits_nothing(served: Served) -> None:
    archive = {"archive": ("bot.zip", pack(RANDOM), "application/zip")}
    with httpx.Client(base_url=served.url) as client:
        # no session at all (a cross-site form: SameSite=Strict sends no cookie)
        assert client.post("/me/upload", files=archive).status_code == 403
        log_in(client, ANN_TOKEN)
        assert client.post("/me/upload", files=archive).status_code == 403
        assert client.post("/me/upload", files=archive, params={"csrf": "guess"}).status_code == 403
        # the token belongs in the form's URL, where it is read before the body: not in it
        mine = csrf_of(client.get("/me").text)
        assert client.post("/me/upload", files=archive, data={"csrf": mine}).status_code == 403
        # another session's token is no good either
        with httpx.Client(base_url=served.url) as other:
            log_in(other, ANN_TOKEN)
            stolen = csrf_of(other.get("/me").text)
        forged = client.post("/me/upload", files=archive, params={"csrf": stolen})
        assert forged.status_code == 403 and "CSRF" in forged.text
        assert served.fake.submits == []
        # and a login form without its token is refused before any token is tried
        assert client.post("/login", data={"token": ANN_TOKEN}).status_code == 403

        me = client.get("/me").text
        assert f'action="/me/upload?csrf={csrf_of(me)}"' in me
        ok = client.post("/me/upload", files=archive, params={"csrf": csrf_of(me)})
        assert (
            ok.status_code == 303
            and ok.headers["location"] == "/me/versions/1?uploaded=new&skipped=0"
        )
    assert len(served.fake.submits) == 1


def test_the_form_shows_a_refusal_and_stores_nothing(served: Served) -> None:
    with httpx.Client(base_url=served.url) as client:
        log_in(client, ANN_TOKEN)
        csrf = csrf_of(client.get("/me").text)
        bad = {"archive": ("bot.zip", b"<script>not a zip</script>" * 10, "application/zip")}
        answer = client.post("/me/upload", files=bad, params={"csrf": csrf})
        assert answer.status_code == 400
        assert 'id="message">refused: ' in answer.text and "<script>" not in answer.text
        big = {"archive": ("big.zip", b"\0" * (served.fake.upload_bytes + 1), "application/zip")}
        answer = client.post("/me/upload", files=big, params={"csrf": csrf})
        assert answer.status_code == 413 and "over the 256 KiB" in answer.text
        none = client.post("/me/upload", files={"archive": ("", b"", "")}, params={"csrf": csrf})
        assert none.status_code == 400 and "choose an archive" in none.text
    assert served.fake.stored() == 0


def test_too_many_failed_logins_are_429(tmp_path: Path, league_store: Path) -> None:
    app = make_app(make_fake(tmp_path, league_store), WebSettings(login_per_minute=2))
    with running(app) as url, httpx.Client(base_url=url) as client:
        assert [log_in(client, "wrong").status_code for _ in range(2)] == [401, 401]
        limited = log_in(client, "wrong")
        assert limited.status_code == 429 and int(limited.headers["retry-after"]) >= 1
        assert "too many failed logins" in limited.text
        # a right token still passes: only failures are limited (issue 35)
        assert log_in(client, ANN_TOKEN).status_code == 303


def test_pages_escape_what_authors_and_bots_wrote_and_show_only_their_own(served: Served) -> None:
    hostile = '<img src=x onerror="alert(1)">'
    bot = ROOT / "sample_bots" / "random"
    folder = served.fake.root / "hostile"
    folder.mkdir()
    for name in ("bot.py",):
        (folder / name).write_bytes((bot / name).read_bytes())
    (folder / "bot.toml").write_text(
        (bot / "bot.toml").read_text().replace('name = "random"', f"name = '{hostile}'")
    )
    api = {"Authorization": f"Bearer {BO_TOKEN}"}
    created = httpx.post(served.url + "api/submissions", content=pack(folder), headers=api)
    assert created.status_code == 201, created.text
    served.fake.outcome = (["failed"], f"build failed: {hostile}")
    assert (
        httpx.post(served.url + "api/submissions", content=pack(RANDOM), headers=api).status_code
        == 201
    )
    served.fake.advance(served.bo, 2)
    served.fake.add_game(served.bo, 1, GAME, 1, "bo's log\n")
    served.fake.add_game(served.ann, 1, GAME, 0, "ann's log\n")

    with httpx.Client(base_url=served.url) as bo:
        log_in(bo, BO_TOKEN)
        me = bo.get("/me").text
        assert hostile not in me and "&lt;img src=x" in me
        assert "failed" in me and "build failed: &lt;img" in me
        version = bo.get("/me/versions/1").text
        assert hostile not in version
        assert f'href="/me/games/{GAME}/seat1.log"' in version
        assert f'href="/games/{GAME}.html"' in version
        assert "seat0.log" not in version
        assert bo.get(f"/me/games/{GAME}/seat1.log").text == "bo's log\n"
        assert bo.get(f"/me/games/{GAME}/seat0.log").status_code == 404
        failed = bo.get("/me/versions/2").text
        assert "/me/versions/2/validations/0.log" in failed and hostile not in failed
        log = bo.get("/me/versions/2/validations/0.log")
        assert log.headers["content-type"].startswith("text/plain")
        assert "sandbox" in log.headers["content-security-policy"]

    with httpx.Client(base_url=served.url) as ann:
        log_in(ann, ANN_TOKEN)
        me = ann.get("/me").text
        assert "No versions yet" in me and "&lt;img" not in me and "build failed" not in me
        assert ann.get("/me/versions/1").status_code == 404
        assert ann.get("/me/versions/2/validations/0.log").status_code == 404
        assert ann.get(f"/me/games/{GAME}/seat1.log").status_code == 404
