// The league page (ttr leaderboard serve / html): draws ttr_arena.pages.league.data.league_json into
// the page and, when served live, asks the server for it again every few seconds and redraws
// in place (no reload). Every text from the store (bot names, fault messages, reasons) goes in
// with textContent or setAttribute, never as markup: bot names are chosen by bot authors.
(function () {
  "use strict";
  var text = TTR.text;
  var embedded = TTR.data();
  var page = embedded.page;
  var league = embedded.league;
  var polls = 0;
  var checked = league.generated_at;  // when the page last had the server's answer

  function $(id) { return document.getElementById(id); }

  function clear(node) {
    while (node.firstChild) node.removeChild(node.firstChild);
    return node;
  }

  function pad(n) { return (n < 10 ? "0" : "") + n; }

  function clock(seconds) {
    var d = new Date(seconds * 1000);
    return pad(d.getHours()) + ":" + pad(d.getMinutes()) + ":" + pad(d.getSeconds());
  }

  function when(seconds) {
    if (seconds === null || seconds === undefined) return "";
    var d = new Date(seconds * 1000);
    return d.getFullYear() + "-" + pad(d.getMonth() + 1) + "-" + pad(d.getDate()) + " " + clock(seconds);
  }

  function plural(n, word) { return n + " " + word + (n === 1 ? "" : "s"); }

  // Only the relative links the data module writes (games/...): never a URL from elsewhere.
  function link(href, content, attrs) {
    if (typeof href !== "string" || href.indexOf("games/") !== 0) return text("span", content, attrs);
    var a = text("a", content, attrs);
    a.setAttribute("href", href);
    return a;
  }

  // A tournament whose heartbeat went stale is stopped: the banner says no tournament runs,
  // and the page polls at the idle rate until a resumed run beats again.
  function running() {
    return league.tournaments.some(function (t) {
      return t.state === "unfinished" && (t.running || t.ladder);
    });
  }

  // --- tournaments and progress ---------------------------------------------------------
  var SHOWN_TOURNAMENTS = 10;

  // An unfinished tournament is running or was stopped: the server judged its heartbeat by
  // its own clock (t.running), so a browser's wrong clock cannot change the answer. A
  // ladder's season never finishes and runs while its server does.
  function stateText(t) {
    if (t.state !== "unfinished") return t.state;
    if (t.ladder) return "season";
    return t.running ? "running" : "stopped (killed?) \u2014 resume with " +
      "`ttr tournament run --db DB --resume` or `ttr tournament abandon --db DB`";
  }

  function drawTournaments() {
    var box = clear($("tournaments"));
    var list = league.tournaments.slice().reverse();
    box.appendChild(text("h2", list.length === 1 ? "Tournament" : "Tournaments"));
    if (!list.length) {
      box.appendChild(text("p", "no tournaments in this store yet", {"class": "muted"}));
      return;
    }
    list.slice(0, SHOWN_TOURNAMENTS).forEach(function (t) {
      var skipped = t.games_skipped || 0;  // games of a bot disabled for its faults: not played
      var row = text("div", null, {"class": "tournament panel", "data-tournament": String(t.id),
        "data-state": t.state, "data-stored": String(t.games_stored),
        "data-skipped": String(skipped),
        "data-scheduled": t.games_scheduled === null ? "" : String(t.games_scheduled)});
      var head = text("div", null, {"class": "t-head"});
      head.appendChild(text("strong", "#" + t.id + " " + t.name));
      head.appendChild(text("span", stateText(t), {"class": "state state-" + t.state}));
      if (t.ladder) {
        // a competition server's season: no schedule, no end
        head.appendChild(text("span", "ladder: " + (t.pools || []).map(function (p) {
          return p[0] + " " + p[1] + "p";
        }).join(", ") + ", began " + when(t.created_at), {"class": "muted"}));
        row.appendChild(head);
        // the competition server adds the ladder's state: paused on a full disk, stopped
        var ls = league.ladder || {state: "running"};
        var idle = ls.state !== "running";
        row.appendChild(text("span", t.games_stored + " games stored; " + (idle
          ? "the ladder is " + ls.state + (ls.reason ? " (" + ls.reason + ")" : "") +
            (ls.since ? " since " + when(ls.since) : "") + ": no games or builds meanwhile"
          : "the ladder plays on"),
          {"class": "progress-text" + (idle ? " ladder-idle" : ""), "data-ladder": ls.state}));
        box.appendChild(row);
        return;
      }
      head.appendChild(text("span", t.variant + ", " + t.players + " players, " +
        plural(t.rounds, "round") + ", began " + when(t.created_at), {"class": "muted"}));
      row.appendChild(head);
      var bar = text("div", null, {"class": "bar"});
      var fill = text("div", null, {"class": "fill"});
      var share = t.games_scheduled ? Math.min(1, (t.games_stored + skipped) / t.games_scheduled) : 0;
      fill.style.width = (100 * share).toFixed(1) + "%";
      bar.appendChild(fill);
      row.appendChild(bar);
      row.appendChild(text("span", t.games_scheduled === null
        ? t.games_stored + " games stored; validating bots"
        : t.games_stored + " / " + t.games_scheduled + " games" +
          (skipped ? ", " + skipped + " skipped (a bot in them was disabled)" : "") +
          " (" + Math.floor(100 * share) + "% done)",
        {"class": "progress-text"}));
      box.appendChild(row);
    });
    if (list.length > SHOWN_TOURNAMENTS) {
      box.appendChild(text("p", plural(list.length - SHOWN_TOURNAMENTS, "older tournament") +
        " not shown (`ttr tournament list` lists them)", {"class": "muted"}));
    }
  }

  // --- pools: table, rating chart, head to head -------------------------------------------
  // One colour per bot on the whole page (table, chart, recent games), by bot id, not by
  // rank: a bot keeps its colour while the table reorders.
  function colours() {
    var seen = {};
    league.pools.forEach(function (pool) { pool.standings.forEach(function (s) { seen[s.bot_id] = true; }); });
    var out = {};
    Object.keys(seen).map(Number).sort(function (a, b) { return a - b; }).forEach(function (id, i) {
      out[id] = TTR.botColour(i);  // twelve distinct, then more by hue (chart.js)
    });
    return out;
  }

  function drawTable(pool, colour) {
    var table = text("table", null, {"class": "standings", "data-pool": pool.variant + "/" + pool.players});
    var head = text("tr");
    league.columns.forEach(function (c, i) { head.appendChild(text("th", c, i === 1 ? {"class": "left"} : {})); });
    table.appendChild(text("thead")).appendChild(head);
    var body = table.appendChild(text("tbody"));
    var names = ["rank", "bot", "rating", "mu", "sigma", "games", "wins", "win", "avg", "faults"];
    pool.standings.forEach(function (s) {
      var tr = text("tr", null, {"data-bot": s.label, "data-bot-id": String(s.bot_id), "data-rank": String(s.rank)});
      var disabled = s.disabled || [];  // where it was disabled for its faults, and why
      if (disabled.length) {
        tr.classList.add("disabled");
        tr.setAttribute("data-disabled", disabled.map(function (d) {
          return "tournament #" + d.tournament + ": " + d.reason;
        }).join("\n"));
      }
      s.cells.forEach(function (cell, i) {
        var td = text("td", null, {"class": names[i] + (i === 1 ? " left" : "")});
        if (i === 1 && disabled.length) td.setAttribute("title", tr.getAttribute("data-disabled"));
        if (i === 1) td.appendChild(text("span", null, {"class": "seat-dot", style: "background:" + colour[s.bot_id]}));
        td.appendChild(document.createTextNode(cell));
        if (i === 9 && s.faults > 0) td.classList.add("fault");
        tr.appendChild(td);
      });
      body.appendChild(tr);
    });
    return table;
  }

  function drawChart(pool, colour, box) {
    var label = {};
    pool.standings.forEach(function (s) { label[s.bot_id] = s.label; });
    // A bot's rating holds until it plays again: its line runs on, flat, from its last game
    // to the pool's last (without this, a bot that stopped playing looked cut off).
    var end = 0;
    pool.history.forEach(function (h) {
      h.points.forEach(function (p) { end = Math.max(end, p[0]); });
    });
    var series = pool.history.map(function (h) {
      var held = h.points.slice();
      var last = held[held.length - 1];
      if (last && last[0] < end) held.push([end].concat(last.slice(1)));
      return {
        name: label[h.bot_id], colour: colour[h.bot_id],
        points: held.map(function (p) { return [p[0], p[3]]; }),
        band: held.map(function (p) { return [p[0], p[3], p[1]]; })
      };
    });
    var svg = TTR.svg("svg", {"class": "rating-chart", width: 720, height: 260, role: "img",
      "aria-label": "rating over the pool's games"});
    box.appendChild(svg);
    TTR.chart(svg, {series: series, width: 720, height: 260, xLabel: "games of the pool"});
    svg.setAttribute("class", "ttr-chart rating-chart");  // chart() sets its own class
    var key = text("div", null, {"class": "chart-key"});
    series.forEach(function (s) {
      var item = text("span", null, {"class": "key-item"});
      item.appendChild(text("span", null, {"class": "seat-dot", style: "background:" + s.colour}));
      item.appendChild(document.createTextNode(s.name));
      key.appendChild(item);
    });
    box.appendChild(key);
    box.appendChild(text("p", "Line: the rating (mu - 3 sigma, what the table sorts by) after each game " +
      "the bot played, flat after its last. Band: from the rating up to mu, the estimated skill; it narrows as sigma " +
      "(the uncertainty) shrinks.", {"class": "muted small"}));
  }

  function drawHeadToHead(pool) {
    var table = text("table", null, {"class": "h2h", "data-pool": pool.variant + "/" + pool.players});
    var head = text("tr");
    head.appendChild(text("th", "ahead–behind", {"class": "left"}));
    pool.standings.forEach(function (s) { head.appendChild(text("th", s.label, {"class": "col"})); });
    table.appendChild(text("thead")).appendChild(head);
    var body = table.appendChild(text("tbody"));
    pool.standings.forEach(function (row, i) {
      var tr = text("tr", null, {"data-bot": row.label});
      tr.appendChild(text("th", row.label, {"class": "left"}));
      pool.head_to_head[i].forEach(function (c, j) {
        if (c === null) { tr.appendChild(text("td", "—", {"class": "self muted"})); return; }
        var other = pool.standings[j].label;
        var td = text("td", c.games ? c.ahead + "–" + c.behind + (c.ties ? " (" + c.ties + " level)" : "") : "",
          {"data-against": other, title: c.games
            ? row.label + " finished ahead of " + other + " in " + c.ahead + " of " + plural(c.games, "game") +
              " together, behind in " + c.behind + ", level in " + c.ties
            : row.label + " and " + other + " have not met"});
        if (c.ahead + c.behind > 0) {
          var share = c.ahead / (c.ahead + c.behind);
          td.style.background = "hsla(" + Math.round(120 * share) + ", 70%, 50%, 0.18)";
        }
        tr.appendChild(td);
      });
      body.appendChild(tr);
    });
    return table;
  }

  function drawPools(colour) {
    var box = clear($("pools"));
    if (!league.pools.length) {
      box.appendChild(text("p", "no games recorded: nothing to rank yet", {"class": "muted"}));
      return;
    }
    league.pools.forEach(function (pool) {
      var section = text("section", null, {"class": "pool", "data-pool": pool.variant + "/" + pool.players});
      section.appendChild(text("h2", pool.variant + ", " + pool.players + " players — " + plural(pool.games, "game")));
      section.appendChild(drawTable(pool, colour));
      var sides = text("div", null, {"class": "pool-sides"});
      var chart = text("div", null, {"class": "chart-box"});
      chart.appendChild(text("h3", "Rating over the games"));
      drawChart(pool, colour, chart);
      sides.appendChild(chart);
      var h2h = text("div", null, {"class": "h2h-box"});
      h2h.appendChild(text("h3", "Head to head"));
      h2h.appendChild(text("p", "Row bot against column bot, in the games they sat in together: " +
        "times it finished ahead – times behind (level: the same rank).", {"class": "muted small"}));
      h2h.appendChild(drawHeadToHead(pool));
      sides.appendChild(h2h);
      section.appendChild(sides);
      box.appendChild(section);
    });
  }

  // --- recent games -----------------------------------------------------------------------
  function drawRecent(colour) {
    var box = clear($("recent"));
    box.appendChild(text("h2", "Recent games"));
    if (!league.recent.length) {
      box.appendChild(text("p", "no games yet", {"class": "muted"}));
      return;
    }
    var table = text("table", null, {"class": "recent"});
    var head = text("tr");
    ["finished", "game", "tournament", "seats (score, place)", "faults", "end"].forEach(function (c, i) {
      head.appendChild(text("th", c, i === 3 || i === 1 ? {"class": "left"} : {}));
    });
    table.appendChild(text("thead")).appendChild(head);
    var body = table.appendChild(text("tbody"));
    league.recent.forEach(function (g) {
      var tr = text("tr", null, {"data-game": g.id});
      tr.appendChild(text("td", when(g.finished_at)));
      var id = text("td", null, {"class": "left"});
      id.appendChild(g.replay ? link(g.replay, g.id, {"class": "replay"}) : text("span", g.id));
      if (!g.replay) {
        id.appendChild(text("span", g.replay_error ? " (no replay: " + g.replay_error + ")" : " (no record)",
          {"class": "muted small"}));
      }
      tr.appendChild(id);
      tr.appendChild(text("td", "#" + g.tournament + " " + g.variant));
      var seats = text("td", null, {"class": "left seats"});
      g.seats.forEach(function (s) {
        var span = text("span", null, {"class": "seat" + (s.rank === 1 ? " first" : "")});
        span.appendChild(text("span", null, {"class": "seat-dot", style: "background:" + (colour[s.bot_id] || "#98a2b3")}));
        span.appendChild(document.createTextNode(s.bot + " " + s.version + " " + s.score + " (" + s.rank + ")"));
        if (s.faults) span.appendChild(text("span", " " + plural(s.faults, "fault"), {"class": "fault"}));
        if (s.log) span.appendChild(link(s.log, "log", {"class": "log"}));
        seats.appendChild(span);
      });
      tr.appendChild(seats);
      var faults = text("td", g.faults_total ? String(g.faults_total) : "", {"class": g.faults_total ? "fault" : ""});
      if (g.faults.length) {
        faults.setAttribute("title", g.faults.map(function (f) {
          return "seat " + f.seat + ", turn " + f.turn + ": " + f.kind + " (" + f.rule + ") " + f.message;
        }).join("\n") + (g.faults_total > g.faults.length ? "\n…" : ""));
      }
      tr.appendChild(faults);
      tr.appendChild(text("td", g.end_reason, {"class": "muted"}));
      body.appendChild(tr);
    });
    box.appendChild(table);
  }

  // --- bots left out, and bots disabled for their faults ----------------------------------
  function reasonPanel(e, kind) {
    var item = text("div", null, {"class": kind + " panel", "data-bot": e.bot + " " + e.version});
    item.appendChild(text("strong", e.bot + " " + e.version));
    item.appendChild(text("span", " in tournament #" + e.tournament + " " + e.tournament_name, {"class": "muted"}));
    item.appendChild(text("pre", e.reason, {"class": "reason"}));
    return item;
  }

  function drawLeftOut() {
    var box = clear($("left-out"));
    box.appendChild(text("h2", "Bots left out"));
    if (!league.left_out.length) {
      box.appendChild(text("p", "none: every entered bot passed its validation game", {"class": "muted"}));
    }
    league.left_out.forEach(function (e) { box.appendChild(reasonPanel(e, "left-out")); });
    var disabled = league.disabled || [];
    if (!disabled.length) return;
    box.appendChild(text("h2", "Bots disabled for their faults"));
    box.appendChild(text("p", "Each passed validation and then faulted in too many of its recent games: " +
      "its games not yet begun were skipped; those it played still count.", {"class": "muted small"}));
    disabled.forEach(function (e) { box.appendChild(reasonPanel(e, "disabled-bot")); });
  }

  // --- live status and refresh ------------------------------------------------------------
  function drawStatus(message) {
    var live = $("live");
    if (!page.live) {
      live.textContent = "snapshot of " + when(page.snapshot_at) + " (a static page: it does not update)";
      live.setAttribute("data-mode", "snapshot");
      return;
    }
    live.setAttribute("data-mode", "live");
    live.setAttribute("data-polls", String(polls));
    live.textContent = message || ((running() ? "live" : "live, no tournament running") +
      ", updated " + clock(checked));
  }

  function draw() {
    drawTournaments();
    var colour = colours();
    drawPools(colour);
    drawRecent(colour);
    drawLeftOut();
    $("legend").textContent = league.legend;
  }

  function schedule() {
    var seconds = running() ? page.refresh_s : page.idle_refresh_s;
    window.setTimeout(poll, 1000 * seconds);
  }

  function poll() {
    fetch(page.api, {cache: "no-store"}).then(function (response) {
      if (!response.ok) throw new Error("the server answered " + response.status);
      return response.json();
    }).then(function (fresh) {
      polls += 1;
      checked = Date.now() / 1000;
      if (fresh.generated_at !== league.generated_at) {
        league = fresh;
        draw();
      }
      drawStatus();
    }, function (error) {
      drawStatus("not updated since " + clock(checked) + " (" + error.message + "); retrying");
    }).then(schedule);
  }

  draw();
  drawStatus();
  if (page.live) schedule();
})();
