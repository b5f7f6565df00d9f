/* A short name made from a name as it is typed (the new-collection form), until the
   short name is edited by hand; the server makes the same one when it is left empty
   (judging.lists.services.slug_from_name: Django's slugify). */
(function () {
  "use strict";

  function slugify(text) {
    return text
      .normalize("NFKD")
      .replace(/[\u0300-\u036f]/g, "")
      .replace(/[^\w\s-]/g, "")
      .trim()
      .toLowerCase()
      .replace(/[-\s]+/g, "-")
      .replace(/^[-_]+|[-_]+$/g, "")
      .slice(0, 100);
  }

  document.addEventListener("input", function (event) {
    const target = event.target;
    if (!(target instanceof HTMLInputElement) || !target.form) return;
    if (target.hasAttribute("data-slug-from")) {
      // Typed by hand: stop following the name (an emptied field follows it again).
      target.dataset.slugEdited = target.value ? "1" : "";
      return;
    }
    const slug = target.form.querySelector('[data-slug-from="' + target.name + '"]');
    if (slug && !slug.dataset.slugEdited) slug.value = slugify(target.value);
  });
})();
