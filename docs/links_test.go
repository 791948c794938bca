// Package docs holds sledge's documentation; its test checks the links.
package docs

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var (
	linkRE    = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	headingRE = regexp.MustCompile("(?m)^#{1,6} +(.+?) *$")
	fenceRE   = regexp.MustCompile("(?ms)^```.*?^```")
	slugDrop  = regexp.MustCompile(`[^\p{L}\p{N} _-]`)
)

// slug is GitHub's anchor for a heading: lower case, punctuation dropped,
// spaces as hyphens.
func slug(h string) string {
	h = strings.ToLower(strings.TrimSpace(h))
	h = slugDrop.ReplaceAllString(h, "")
	return strings.ReplaceAll(h, " ", "-")
}

// Every link in the README and docs/ resolves inside the repository: to a
// file that exists and, with a #fragment, to one of its headings. Links
// out of the repository (http, or a path above it) are refused, and so is
// naming the workplace's shared/docs, which the repository does not hold.
func TestLinksResolveInsideTheRepository(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, filepath.Join(root, "README.md"))
	anchors := map[string]map[string]bool{}
	anchorsOf := func(path string) map[string]bool {
		if a, ok := anchors[path]; ok {
			return a
		}
		a := map[string]bool{}
		if b, err := os.ReadFile(path); err == nil {
			for _, m := range headingRE.FindAllStringSubmatch(fenceRE.ReplaceAllString(string(b), ""), -1) {
				a[slug(m[1])] = true
			}
		}
		anchors[path] = a
		return a
	}
	links := 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		text := fenceRE.ReplaceAllString(string(b), "")
		rel, _ := filepath.Rel(root, f)
		if strings.Contains(text, "shared/docs") {
			t.Errorf("%s names shared/docs, which is not in the repository", rel)
		}
		for _, m := range linkRE.FindAllStringSubmatch(text, -1) {
			links++
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				t.Errorf("%s: link %s leaves the repository", rel, target)
				continue
			}
			path, frag, _ := strings.Cut(target, "#")
			dest := f
			if path != "" {
				dest = filepath.Join(filepath.Dir(f), path)
			}
			if r, err := filepath.Rel(root, dest); err != nil || strings.HasPrefix(r, "..") {
				t.Errorf("%s: link %s points outside the repository", rel, target)
				continue
			}
			fi, err := os.Stat(dest)
			if err != nil {
				t.Errorf("%s: link %s: no such file", rel, target)
				continue
			}
			if frag != "" && !fi.IsDir() && strings.HasSuffix(dest, ".md") && !anchorsOf(dest)[frag] {
				t.Errorf("%s: link %s: no heading #%s in %s", rel, target, frag, filepath.Base(dest))
			}
		}
	}
	if links < 20 {
		t.Errorf("found only %d links: is the pattern right?", links)
	}
}
