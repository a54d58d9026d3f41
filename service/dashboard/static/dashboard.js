// Toolgate dashboard: the few conveniences the spec names. The server re-checks everything on Save.
// - repeatable rows (parameters, playground calls): add, remove, move up and down (buttons, Alt+Arrow keys, or
//   dragging a parameter by its handle), renumbered in place;
// - the editor's locks: an array or object rides in the body, an array asks for its element type,
//   the subject is always a string;
// - a warning before unsaved changes are lost; focus on the error summary after a refused save.
(function () {
  "use strict";

  var BODY_ONLY = ["array", "object"];
  var SUBJECT = "subject";
  var fresh = 0;

  function field(row, name) {
    return row.querySelector('[data-field="' + name + '"]');
  }

  // Locked controls are disabled, so they are not sent: the registry then applies the same defaults
  // (a subject is a string, an array or object goes in the body), so what was shown is what is saved.
  function applyLocks(row) {
    var name = field(row, "name"), type = field(row, "type"), location = field(row, "location");
    var elementType = field(row, "element_type");
    if (!name || !type || !location) return;
    var notes = [];
    var isSubject = name.value.trim() === SUBJECT;
    if (isSubject) {
      type.value = "string";
      notes.push("The subject is always a string: the platform fills it from the session, never the model.");
    }
    type.disabled = isSubject;
    var bodyOnly = BODY_ONLY.indexOf(type.value) !== -1;
    if (bodyOnly) {
      location.value = "body";
      notes.push("An array or object rides in the request body only.");
    }
    location.disabled = bodyOnly;
    if (elementType) {
      var isArray = type.value === "array";
      row.querySelector("[data-element-type]").hidden = !isArray;
      elementType.disabled = !isArray;
    }
    var note = row.querySelector("[data-lock-note]");
    if (note) {
      note.textContent = notes.join(" ");
      note.hidden = notes.length === 0;
    }
  }

  // Names carry the row's position (parameters[2].name) and the server reads them in that order.
  function rowsOf(list) {
    return Array.prototype.filter.call(list.children, function (el) { return el.hasAttribute("data-row"); });
  }

  // Ids follow the names too, so each label, error and summary link still points at its own input.
  function renumber(list) {
    var prefix = list.getAttribute("data-rows");
    var pattern = new RegExp("^" + prefix + "\\[[^\\]]*\\]");
    var idPattern = new RegExp("^f-" + prefix + "-[^-]+-");
    rowsOf(list).forEach(function (row, i) {
      row.querySelectorAll("[name]").forEach(function (el) {
        if (pattern.test(el.name)) el.name = el.name.replace(pattern, prefix + "[" + i + "]");
        if (el.getAttribute("name") === "op") el.value = el.value.replace(/-[^-]+$/, "-" + i);
      });
      row.querySelectorAll("[id]").forEach(function (el) {
        if (idPattern.test(el.id)) el.id = el.id.replace(idPattern, "f-" + prefix + "-" + i + "-");
      });
      row.querySelectorAll("label[for]").forEach(function (el) {
        el.htmlFor = el.htmlFor.replace(idPattern, "f-" + prefix + "-" + i + "-");
      });
      row.querySelectorAll("[aria-describedby]").forEach(function (el) {
        el.setAttribute("aria-describedby", el.getAttribute("aria-describedby").split(" ").map(function (ref) {
          return ref.replace(idPattern, "f-" + prefix + "-" + i + "-");
        }).join(" "));
      });
      row.querySelectorAll("[data-row-number]").forEach(function (number) {
        number.textContent = String(i + 1);
      });
    });
    var none = list.parentNode.querySelector("[data-no-rows]");
    if (none) none.hidden = rowsOf(list).length > 0;
  }

  function newRow(container, list) {
    var template = container.querySelector("template[data-row-template]");
    fresh += 1;
    var html = template.innerHTML.replace(/__ROW__/g, "new" + fresh);
    // A table's rows parse only inside a table.
    var holder = document.createElement(list.tagName === "TABLE" ? "table" : "ol");
    holder.innerHTML = html.trim();
    var row = holder.querySelector("[data-row]");
    enableHandle(row);
    return row;
  }

  function move(list, row, offset) {
    var rows = rowsOf(list), at = rows.indexOf(row), to = at + offset;
    if (to < 0 || to >= rows.length) return false;
    list.insertBefore(row, offset < 0 ? rows[to] : rows[to].nextSibling);
    renumber(list);
    return true;
  }

  // Dragging a parameter by its handle: the handle is what is dragged, the whole row is what moves.
  var dragged = null;

  function enableHandle(row) {
    var handle = row && row.querySelector("[data-handle]");
    if (!handle) return;
    handle.hidden = false;
    handle.draggable = true;
  }

  function onDragStart(event) {
    var handle = event.target.closest && event.target.closest("[data-handle]");
    if (!handle) return;
    dragged = handle.closest("[data-row]");
    dragged.classList.add("dragging");
    event.dataTransfer.effectAllowed = "move";
    event.dataTransfer.setData("text/plain", "");
    event.dataTransfer.setDragImage(dragged, 0, 0);
  }

  function onDragOver(event) {
    var row = dragged && event.target.closest && event.target.closest("[data-row]");
    if (!row || row === dragged || row.parentNode !== dragged.parentNode) return;
    event.preventDefault();
    var box = row.getBoundingClientRect();
    var after = event.clientY > box.top + box.height / 2;
    row.parentNode.insertBefore(dragged, after ? row.nextSibling : row);
  }

  function onDragEnd() {
    if (!dragged) return;
    var list = dragged.parentNode;
    dragged.classList.remove("dragging");
    renumber(list);
    markDirty(list.closest("form"));
    dragged = null;
  }

  function onRowOp(event) {
    var button = event.target.closest("[data-op]");
    if (!button) return;
    var container = button.closest("fieldset.parameters, form");
    var list = container.querySelector("[data-rows]");
    var op = button.getAttribute("data-op");
    var row = button.closest("[data-row]");
    event.preventDefault();
    if (op === "add") {
      row = newRow(container, list);
      list.appendChild(row);
      applyLocks(row);
      renumber(list);
      row.querySelector("input, select, textarea").focus();
    } else if (op === "remove") {
      var rows = rowsOf(list), at = rows.indexOf(row);
      var next = rows[at + 1] || rows[at - 1];
      row.remove();
      renumber(list);
      (next ? next.querySelector("input, textarea") : container.querySelector('[data-op="add"]')).focus();
    } else if (op === "up" || op === "down") {
      move(list, row, op === "up" ? -1 : 1);
      button.focus();
    }
    markDirty(button.form);
  }

  function markDirty(form) {
    if (!form || !form.hasAttribute("data-warn-unsaved")) return;
    form.setAttribute("data-dirty", "true");
    var note = form.querySelector("[data-unsaved-note]");
    if (note) note.hidden = false;
  }

  function anyDirty() {
    return document.querySelector('form[data-warn-unsaved][data-dirty="true"]') !== null;
  }

  // Alt+ArrowUp and Alt+ArrowDown move the row that has the focus, keeping the focus where it was.
  function onRowKey(event) {
    if (!event.altKey || (event.key !== "ArrowUp" && event.key !== "ArrowDown")) return;
    var row = event.target.closest("[data-row]");
    if (!row) return;
    var focused = document.activeElement;
    if (move(row.parentNode, row, event.key === "ArrowUp" ? -1 : 1)) {
      event.preventDefault();
      focused.focus();
      markDirty(row.closest("form"));
    }
  }

  document.addEventListener("DOMContentLoaded", function () {
    document.querySelectorAll("[data-rows] > [data-row]").forEach(applyLocks);
    document.querySelectorAll("[data-rows]").forEach(function (list) {
      var form = list.closest("form");
      if (!form || form.querySelector("fieldset:disabled [data-rows]") === list) return;
      form.addEventListener("click", onRowOp);
      list.addEventListener("keydown", onRowKey);
      rowsOf(list).forEach(enableHandle);
      list.addEventListener("dragstart", onDragStart);
      list.addEventListener("dragover", onDragOver);
      list.addEventListener("dragend", onDragEnd);
    });
    document.querySelectorAll("form[data-editor]").forEach(function (form) {
      var relock = function (event) {
        var row = event.target.closest("[data-row]");
        if (row) applyLocks(row);
      };
      form.addEventListener("change", relock);
      form.addEventListener("input", relock);
    });
    document.querySelectorAll("form[data-warn-unsaved]").forEach(function (form) {
      form.addEventListener("input", function () { markDirty(form); });
      form.addEventListener("change", function () { markDirty(form); });
      // Saving is the deliberate way out: it must not be warned about.
      form.addEventListener("submit", function () { form.removeAttribute("data-dirty"); });
    });
    // After a refused save, the list of problems; after a step, its results.
    var focus = document.querySelector("[data-error-summary]") || document.querySelector("[data-focus-on-load]");
    if (focus) focus.focus();
  });

  window.addEventListener("beforeunload", function (event) {
    if (!anyDirty()) return;
    event.preventDefault();
    event.returnValue = "";
  });
})();
