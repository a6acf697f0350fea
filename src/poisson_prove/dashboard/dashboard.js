"use strict";
// The dashboard's one script: sorting and filtering of the tables already on the page, an
// episode's spans opened in place, and the pair picker. It fetches nothing, builds no markup
// from text (textContent and attributes only), and the page works without it.
(function () {
  // A table's rows of values: not its header, nor an episode's row of details (its spans) under it.
  function rowsOf(table) {
    return Array.prototype.filter.call(table.tBodies[0].rows, function (r) {
      return !r.querySelector("th") && !r.classList.contains("detail");
    });
  }
  function key(cell) {
    var raw = cell.hasAttribute("data-sort") ? cell.getAttribute("data-sort")
      : cell.hasAttribute("data-share") ? cell.getAttribute("data-share") : cell.textContent.trim();
    var num = parseFloat(raw);
    return raw !== "" && isFinite(num) && /^[-+]?[\d.]/.test(raw) ? num : raw.toLowerCase();
  }
  function sortBy(table, column, th) {
    var down = th.getAttribute("aria-sort") === "ascending";
    Array.prototype.forEach.call(table.querySelectorAll("th[aria-sort]"), function (h) { h.removeAttribute("aria-sort"); });
    th.setAttribute("aria-sort", down ? "descending" : "ascending");
    var rows = rowsOf(table);
    rows.sort(function (a, b) {
      var x = key(a.cells[column]), y = key(b.cells[column]);
      var order = typeof x === typeof y ? (x < y ? -1 : x > y ? 1 : 0) : (typeof x === "number" ? -1 : 1);
      return down ? -order : order;
    });
    var body = table.tBodies[0];
    rows.forEach(function (r) {
      body.appendChild(r);
      var detail = document.getElementById(r.getAttribute("data-detail") || "");
      if (detail) { body.appendChild(detail); }
    });
  }
  Array.prototype.forEach.call(document.querySelectorAll("table.sortable"), function (table) {
    var head = table.rows[0];
    Array.prototype.forEach.call(head.cells, function (th, column) {
      th.classList.add("sorts");
      th.setAttribute("tabindex", "0");
      th.title = "sort by " + th.textContent.trim();
      th.addEventListener("click", function () { sortBy(table, column, th); });
      th.addEventListener("keydown", function (e) { if (e.key === "Enter") { sortBy(table, column, th); } });
    });
  });

  // Filters: a control's data-key names the row attribute it matches ("text": the row's text).
  function valueOf(row, k) {
    if (k.indexOf("col") === 0) { var cell = row.cells[parseInt(k.slice(3), 10)]; return cell ? cell.textContent.trim() : ""; }
    return row.getAttribute(k);
  }
  function applyFilters(box) {
    var table = document.getElementById(box.getAttribute("data-for"));
    var controls = box.querySelectorAll("[data-key]");
    var shown = 0, rows = rowsOf(table);
    rows.forEach(function (row) {
      var ok = Array.prototype.every.call(controls, function (c) {
        var k = c.getAttribute("data-key");
        if (c.type === "checkbox") { return !c.checked || row.getAttribute(k) === "1"; }
        var want = c.value.trim().toLowerCase();
        if (!want) { return true; }
        var have = k === "text" ? row.textContent.toLowerCase() : (valueOf(row, k) || "").toLowerCase();
        return c.tagName === "SELECT" ? have === want : have.indexOf(want) >= 0;
      });
      row.hidden = !ok;
      var detail = document.getElementById(row.getAttribute("data-detail") || "");
      if (detail && !ok) { detail.hidden = true; }
      shown += ok ? 1 : 0;
    });
    var count = box.querySelector(".count");
    if (count) { count.textContent = shown + " of " + rows.length + " shown"; }
  }
  Array.prototype.forEach.call(document.querySelectorAll(".filters"), function (box) {
    var table = document.getElementById(box.getAttribute("data-for"));
    if (!table) { return; }
    Array.prototype.forEach.call(box.querySelectorAll("select[data-key]"), function (select) {
      var k = select.getAttribute("data-key"), seen = {};
      rowsOf(table).forEach(function (r) {
        var v = valueOf(r, k);
        if (v !== null && v !== "" && !seen[v]) { seen[v] = true; }
      });
      Object.keys(seen).sort().forEach(function (v) {
        var option = document.createElement("option");
        option.value = v;
        option.textContent = v;
        select.appendChild(option);
      });
    });
    box.addEventListener("input", function () { applyFilters(box); });
    box.addEventListener("change", function () { applyFilters(box); });
    box.hidden = false;
    applyFilters(box);
  });

  // An episode's row opens (and closes) the row under it with its spans, meta and error.
  Array.prototype.forEach.call(document.querySelectorAll("tr[data-detail]"), function (row) {
    var detail = document.getElementById(row.getAttribute("data-detail"));
    if (!detail) { return; }
    row.classList.add("opens");
    row.setAttribute("tabindex", "0");
    row.setAttribute("aria-expanded", "false");
    function toggle() {
      detail.hidden = !detail.hidden;
      row.setAttribute("aria-expanded", detail.hidden ? "false" : "true");
    }
    row.addEventListener("click", toggle);
    row.addEventListener("keydown", function (e) { if (e.key === "Enter") { toggle(); } });
  });

  // The pair picker: the comparison of the two runs chosen, if the page has it; a served page
  // asks its server for any other pair (the same page, reloaded with ?before=...&after=...).
  var picker = document.getElementById("pair-picker");
  if (picker) {
    var before = document.getElementById("pick-before"), after = document.getElementById("pick-after");
    var answer = document.getElementById("pick-answer");
    picker.hidden = false;
    document.getElementById("pick-go").addEventListener("click", function () {
      var b = before.value, a = after.value, found = null;
      answer.textContent = "";
      if (b === a) { answer.textContent = "choose two different runs"; return; }
      Array.prototype.forEach.call(document.querySelectorAll("details.comparison"), function (d) {
        var match = d.getAttribute("data-before") === b && d.getAttribute("data-after") === a;
        d.classList.toggle("picked", match);
        if (match && !found) { found = d; }
      });
      if (found) {
        found.open = true;
        found.scrollIntoView();
      } else if (picker.getAttribute("data-served") === "1") {
        window.location.search = "?before=" + encodeURIComponent(b) + "&after=" + encodeURIComponent(a);
      } else {
        answer.textContent = "this page holds the comparisons listed below; for this pair run "
          + "poisson-prove diff " + b + " " + a + ", or poisson-prove dashboard --serve (any pair)";
      }
    });
  }
})();
