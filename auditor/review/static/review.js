/* auditor review: keyboard shortcuts, as the pages list them (#shortcuts).
 *
 * Every shortcut follows a link of the page or submits one of its forms (the form's own
 * token goes with it), so nothing here is needed to use the pages. Served as a file of
 * the site: the content security policy runs no inline script. Off while typing in a
 * text box or a list of choices (Esc leaves it) and with Ctrl, Alt or Meta held.
 */
(function () {
  "use strict";

  function typing(target) {
    return Boolean(target && target.closest &&
      target.closest("input, textarea, select, [contenteditable]"));
  }

  function go(selector, hash) {
    var a = document.querySelector(selector);
    if (a && a.href) {
      window.location.assign(hash ? a.href.replace(/#.*$/, "") + hash : a.href);
      return true;
    }
    return false;
  }

  // --- the list: a selected row, moved by j and k -------------------------------------

  function rows() {
    return Array.prototype.slice.call(
      document.querySelectorAll("#findings-table tbody tr[data-finding-id]"));
  }

  function selected(all) {
    for (var i = 0; i < all.length; i++) {
      if (all[i].classList.contains("selected")) {
        return i;
      }
    }
    return -1;
  }

  function select(row) {
    rows().forEach(function (r) {
      r.classList.remove("selected");
      r.removeAttribute("aria-current");
    });
    row.classList.add("selected");
    row.setAttribute("aria-current", "true");
    var a = row.querySelector("a.finding-link");
    if (a) {
      a.focus({preventScroll: true}); // Enter opens it, as any link
    }
    row.scrollIntoView({block: "nearest"});
  }

  function move(step) {
    var all = rows();
    if (!all.length) {
      return false;
    }
    var at = selected(all);
    var to = at < 0 ? (step > 0 ? 0 : all.length - 1) : at + step;
    if (to < 0 || to >= all.length) {
      // past the page's last (or first) row: the next (or previous) page
      return step > 0 ? go("#page-next") : go("#page-prev", "#finding-last");
    }
    select(all[to]);
    return true;
  }

  function open() {
    var all = rows();
    var at = selected(all);
    var a = at >= 0 ? all[at].querySelector("a.finding-link") : null;
    if (a) {
      window.location.assign(a.href);
      return true;
    }
    return false;
  }

  // the row of the finding the reviewer came back from (the back link's #finding-ID)
  function selectFromAddress() {
    var id = window.location.hash.replace(/^#finding-/, "");
    if (!id || id === window.location.hash) {
      return;
    }
    var all = rows();
    if (id === "last" && all.length) {
      select(all[all.length - 1]);
      return;
    }
    var row = document.querySelector('#findings-table tr[data-finding-id="' +
      (window.CSS && CSS.escape ? CSS.escape(id) : id) + '"]');
    if (row) {
      select(row);
    }
  }

  // --- a finding: a disposition by its key --------------------------------------------

  function dispose(key) {
    var form = document.getElementById("disposition-form");
    var choice = document.getElementById("disposition-state");
    if (!form || !choice) {
      return false;
    }
    for (var i = 0; i < choice.options.length; i++) {
      if (choice.options[i].getAttribute("data-key") === key) {
        choice.selectedIndex = i;
        form.requestSubmit(document.getElementById("disposition-submit"));
        return true;
      }
    }
    return false;
  }

  // --- the list of shortcuts -----------------------------------------------------------

  function help() {
    var panel = document.getElementById("shortcuts");
    if (!panel) {
      return false;
    }
    panel.open = !panel.open;
    if (panel.open) {
      panel.querySelector("summary").focus();
    }
    return true;
  }

  document.addEventListener("keydown", function (event) {
    if (event.defaultPrevented || event.isComposing || event.ctrlKey || event.altKey ||
        event.metaKey) {
      return;
    }
    var target = event.target;
    if (event.key === "Escape") {
      if (typing(target)) {
        target.blur();
      } else {
        var panel = document.getElementById("shortcuts");
        if (panel && panel.open) {
          panel.open = false;
        }
      }
      return;
    }
    if (typing(target)) {
      return;
    }
    var onFinding = document.getElementById("finding-nav") !== null;
    var done = false;
    switch (event.key) {
      case "j":
        done = onFinding ? go("#finding-next") : move(1);
        break;
      case "k":
        done = onFinding ? go("#finding-prev") : move(-1);
        break;
      case "o":
        done = !onFinding && open();
        break;
      case "u":
        done = onFinding && go("#back-to-findings");
        break;
      case "/":
        var search = document.getElementById("filter-q");
        if (search) {
          search.focus();
          search.select();
          done = true;
        }
        break;
      case "?":
        done = help();
        break;
      default:
        done = onFinding && /^[0-9]$/.test(event.key) && dispose(event.key);
    }
    if (done) {
      event.preventDefault();
    }
  });

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", selectFromAddress);
  } else {
    selectFromAddress();
  }
  // a list swapped in by htmx (a filter, a page): the selection starts again
  document.addEventListener("htmx:afterSwap", function () {
    if (!document.querySelector("#findings-table tr.selected")) {
      selectFromAddress();
    }
  });
})();
