// cardhour's small shared script: no framework, no build step.
(function () {
  "use strict";
  // Destructive forms ask first; the question comes from the server in the
  // viewer's language (data-confirm).
  document.addEventListener("submit", function (ev) {
    var form = ev.target;
    var question = form && form.getAttribute && form.getAttribute("data-confirm");
    if (question && !window.confirm(question)) {
      ev.preventDefault();
    }
  });

  // Copy buttons (web.CopySecret): data-copy names the element whose text
  // goes to the clipboard; the status beside the button says whether it
  // did, in the page's language (data-copied, data-copy-failed). They are
  // drawn hidden: without this script the text is selected by hand.
  var copyButtons = document.querySelectorAll("[data-copy]");
  for (var i = 0; i < copyButtons.length; i++) {
    copyButtons[i].hidden = false;
  }
  function selectText(el) {
    var range = document.createRange();
    range.selectNodeContents(el);
    var sel = window.getSelection();
    sel.removeAllRanges();
    sel.addRange(range);
  }
  // Without the Clipboard API (a page not served over https, an old
  // browser) the text is selected and copied the old way.
  function copyBySelection(el) {
    selectText(el);
    try {
      return document.execCommand("copy");
    } catch (e) {
      return false;
    }
  }
  document.addEventListener("click", function (ev) {
    var btn = ev.target && ev.target.closest && ev.target.closest("[data-copy]");
    if (!btn) {
      return;
    }
    var src = document.querySelector(btn.getAttribute("data-copy"));
    var status = btn.parentNode.querySelector(".copy-status");
    if (!src) {
      return;
    }
    var text = src.textContent.trim();
    function say(ok) {
      if (!ok) {
        selectText(src); // ready for Ctrl+C
      }
      if (status) {
        status.textContent = btn.getAttribute(ok ? "data-copied" : "data-copy-failed");
        status.classList.toggle("copy-failed", !ok);
      }
      btn.setAttribute("data-copy-state", ok ? "copied" : "failed");
    }
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(text).then(function () {
        say(true);
      }, function () {
        say(copyBySelection(src));
      });
    } else {
      say(copyBySelection(src));
    }
  });

  // The section menu (a <details>): open on a wide screen, for browsers
  // whose stylesheet cannot show a closed one's content; closed when the
  // screen narrows to a phone's; Escape closes it and gives the button
  // back the focus.
  var menu = document.querySelector("[data-menu]");
  if (menu && window.matchMedia) {
    var wide = window.matchMedia("(min-width: 701px)");
    var fit = function () {
      menu.open = wide.matches;
      menu.classList.toggle("is-wide", wide.matches);
    };
    fit();
    if (wide.addEventListener) {
      wide.addEventListener("change", fit);
    }
    menu.addEventListener("keydown", function (ev) {
      if (ev.key === "Escape" && menu.open && !wide.matches) {
        menu.open = false;
        menu.querySelector("summary").focus();
      }
    });
  }
})();
