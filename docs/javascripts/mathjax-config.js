// MathJax settings for pymdownx.arithmatex (generic mode). MathJax itself is served from the site
// (javascripts/mathjax/, copied by docs/hooks/mathjax.py), so the formulas render offline.
// Typeset: the formulas (class arithmatex) and the navigation titles (md-ellipsis), where a heading holds one.
// textmacros: \_ and friends inside \text{...}.
window.MathJax = {
  loader: { load: ["[tex]/textmacros"] },
  tex: {
    packages: { "[+]": ["textmacros"] },
    inlineMath: [["\\(", "\\)"]],
    displayMath: [["\\[", "\\]"]],
    processEscapes: true,
    processEnvironments: true,
  },
  options: { ignoreHtmlClass: ".*|", processHtmlClass: "arithmatex|md-ellipsis" },
};
