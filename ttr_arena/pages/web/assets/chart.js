// TTR Arena's shared page helpers (referee/web): the embedded data, a small SVG line chart
// with optional bands, used by the replay viewer (scores over a game) and the league page
// (ratings over a pool's games), and the final score table of the replay and the human seat's
// page. No library: the pages must open with no network.
"use strict";
var TTR = (function () {
  var SVG = "http://www.w3.org/2000/svg";
  // Seats (the replay): apart from each other and from the board's route and card colours.
  var SEAT_COLOURS = ["#00a6a6", "#b5008a", "#8c564b", "#5b2c9f", "#8f9a00", "#7a0019"];
  // Bots (the league page, no board): twelve colours apart from each other, then more made
  // by turning the hue by the golden angle (a thirteenth bot still gets its own colour).
  var BOT_COLOURS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf",
    "#8c564b", "#e377c2", "#000000", "#bcbd22", "#0a2d6e", "#ffbb78"];
  function botColour(i) {
    if (i < BOT_COLOURS.length) return BOT_COLOURS[i];
    var hue = Math.round((i - BOT_COLOURS.length) * 137.508 + 20) % 360;
    return "hsl(" + hue + ", " + (i % 2 ? 55 : 80) + "%, " + (i % 3 ? 38 : 52) + "%)";
  }

  function data() {
    return JSON.parse(document.getElementById("ttr-data").textContent);
  }

  function el(name, attrs, parent) {
    var node = document.createElementNS(SVG, name);
    for (var key in attrs) node.setAttribute(key, attrs[key]);
    if (parent) parent.appendChild(node);
    return node;
  }

  // chart(svg, {series: [{name, colour, points: [[x, y]...], band: [[x, lo, hi]...]}],
  //             width, height, xLabel, yLabel, marks: [{x, colour, title}]})
  // Draws into the <svg> (emptied first) and returns {x: fn, y: fn, cursor: fn(x)} so a
  // page can move a vertical cursor (the replay's current step) without redrawing.
  function chart(svg, spec) {
    while (svg.firstChild) svg.removeChild(svg.firstChild);
    var w = spec.width || 420, h = spec.height || 180, left = 40, right = 10, top = 8, bottom = 24;
    svg.setAttribute("viewBox", "0 0 " + w + " " + h);
    svg.setAttribute("class", "ttr-chart");
    var xs = [], ys = [];
    spec.series.forEach(function (s) {
      s.points.forEach(function (p) { xs.push(p[0]); ys.push(p[1]); });
      (s.band || []).forEach(function (b) { xs.push(b[0]); ys.push(b[1], b[2]); });
    });
    var x0 = Math.min.apply(null, xs.length ? xs : [0]), x1 = Math.max.apply(null, xs.length ? xs : [1]);
    var y0 = Math.min.apply(null, ys.length ? ys : [0]), y1 = Math.max.apply(null, ys.length ? ys : [1]);
    if (spec.yFromZero !== false) y0 = Math.min(0, y0);
    if (x1 === x0) x1 = x0 + 1;
    if (y1 === y0) y1 = y0 + 1;
    function x(v) { return left + (v - x0) / (x1 - x0) * (w - left - right); }
    function y(v) { return h - bottom - (v - y0) / (y1 - y0) * (h - top - bottom); }
    el("line", {x1: left, y1: h - bottom, x2: w - right, y2: h - bottom, "class": "axis"}, svg);
    el("line", {x1: left, y1: top, x2: left, y2: h - bottom, "class": "axis"}, svg);
    [y0, (y0 + y1) / 2, y1].forEach(function (v) {
      var t = el("text", {x: left - 4, y: y(v) + 4, "text-anchor": "end"}, svg);
      t.textContent = Math.round(v * 10) / 10;
    });
    if (spec.xLabel) {
      el("text", {x: (left + w - right) / 2, y: h - 6, "text-anchor": "middle"}, svg).textContent = spec.xLabel;
    }
    (spec.marks || []).forEach(function (m) {
      var line = el("line", {x1: x(m.x), y1: top, x2: x(m.x), y2: h - bottom,
        stroke: m.colour || "#c01048", "stroke-dasharray": "2 2", "class": "mark"}, svg);
      if (m.title) el("title", {}, line).textContent = m.title;
    });
    spec.series.forEach(function (s, i) {
      var colour = s.colour || SEAT_COLOURS[i % SEAT_COLOURS.length];
      if (s.band && s.band.length) {
        var upper = s.band.map(function (b) { return x(b[0]) + "," + y(b[2]); });
        var lower = s.band.slice().reverse().map(function (b) { return x(b[0]) + "," + y(b[1]); });
        el("polygon", {points: upper.concat(lower).join(" "), fill: colour, "fill-opacity": 0.12,
          stroke: "none", "class": "band"}, svg);
      }
      var line = el("polyline", {points: s.points.map(function (p) { return x(p[0]) + "," + y(p[1]); }).join(" "),
        fill: "none", stroke: colour, "stroke-width": 2, "class": "series", "data-name": s.name}, svg);
      el("title", {}, line).textContent = s.name;
    });
    var cursor = el("line", {x1: left, y1: top, x2: left, y2: h - bottom, stroke: "#1d2330",
      "stroke-width": 1, visibility: "hidden", "class": "cursor"}, svg);
    return {
      x: x, y: y,
      cursor: function (v) {
        cursor.setAttribute("x1", x(v)); cursor.setAttribute("x2", x(v));
        cursor.setAttribute("visibility", "visible");
      }
    };
  }

  function text(tag, content, attrs) {
    var node = document.createElement(tag);
    if (content !== undefined && content !== null) node.textContent = content;
    for (var key in attrs || {}) node.setAttribute(key, attrs[key]);
    return node;
  }

  // outcomeTable(outcome, colours): the final score table (the replay's film.outcome, the
  // human page's state.outcome: {columns, rows: [{seat, total, cells}]}, column 1 the seat,
  // marked with its colour's dot), in its scrolling box; every cell set as text.
  function outcomeTable(o, colours) {
    var table = text("table", null, {"class": "outcome"});
    var tr = text("tr");
    o.columns.forEach(function (c, i) { tr.appendChild(text("th", c, {"class": i === 1 ? "left" : ""})); });
    table.appendChild(tr);
    o.rows.forEach(function (row) {
      var r = text("tr", null, {"data-seat": row.seat, "data-total": row.total});
      row.cells.forEach(function (c, i) {
        var td = text("td", c, {"class": i === 1 ? "left" : ""});
        if (i === 1) {
          var dot = text("span", null, {"class": "seat-dot"});
          dot.style.background = colours[row.seat];
          td.insertBefore(dot, td.firstChild);
        }
        r.appendChild(td);
      });
      table.appendChild(r);
    });
    var wrap = text("div", null, {"class": "outcome-box"});
    wrap.appendChild(table);
    return wrap;
  }

  return {SEAT_COLOURS: SEAT_COLOURS, BOT_COLOURS: BOT_COLOURS, botColour: botColour, data: data,
    chart: chart, svg: el, text: text, outcomeTable: outcomeTable};
})();
