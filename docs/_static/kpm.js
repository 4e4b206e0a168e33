/* kpm's additions to the PyData theme (docs/conf.py: html_js_files).
   Long dotted names (kpm.machine.selection.candidate_penalties, TWO_STAGE_MAX_SWEEPS) in the
   navigation, the page's table of contents and the API pages' titles may break after a dot
   or an underscore: a <wbr> there, so that the CSS fallback (overflow-wrap: anywhere, in
   kpm.css) only breaks inside a part that is wider than the column on its own. */
document.addEventListener("DOMContentLoaded", () => {
  const where = [".bd-sidebar-primary nav a", ".bd-sidebar-secondary .toc-entry a",
                 ".bd-article h1", ".prev-next-area .prev-next-title"].join(", ");
  for (const root of document.querySelectorAll(where)) {
    const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
    const texts = [];
    for (let n; (n = walker.nextNode());) {
      if (/[._]\w/.test(n.data)) texts.push(n);
    }
    for (const n of texts) {
      const parts = n.data.split(/(?<=[._])(?=\w)/);
      const frag = document.createDocumentFragment();
      parts.forEach((p, i) => {
        if (i) frag.appendChild(document.createElement("wbr"));
        frag.appendChild(document.createTextNode(p));
      });
      n.replaceWith(frag);
    }
  }
});
