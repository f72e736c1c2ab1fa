package gangpack

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	resourcev1alpha3 "k8s.io/api/resource/v1alpha3"
	resourcev1beta1 "k8s.io/api/resource/v1beta1"
	resourcev1beta2 "k8s.io/api/resource/v1beta2"
	schedulingv1 "k8s.io/api/scheduling/v1"
	schedulingv1alpha3 "k8s.io/api/scheduling/v1alpha3"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// Input is the manifests a call reads: Kubernetes objects as YAML or JSON texts
// (multi-document, `kind: List`), from bytes ([YAML]), files ([Files]) or Go objects
// ([Objects]); [Join] puts several together. The zero Input is empty.
type Input struct {
	files []file
	err   error
}

// file is one named text, as the module takes it.
type file struct {
	Name string `json:"name"`
	Text string `json:"text"`
}

// YAML is manifests as text: multi-document YAML, JSON, or a `kind: List` (as
// `kubectl get -o yaml` prints them). Messages name it "input".
func YAML(b []byte) Input {
	return Input{files: []file{{Name: "input", Text: string(b)}}}
}

// Named is [YAML] with the name messages give the text (a file name).
func Named(name string, b []byte) Input {
	return Input{files: []file{{Name: name, Text: string(b)}}}
}

// Files reads manifests from files and directories (every *.yaml, *.yml and *.json
// below a directory, sorted by path), as the gangpack command does. A path that cannot
// be read makes every call with this input fail with an IoError naming it.
func Files(paths ...string) Input {
	var in Input
	for _, p := range paths {
		info, err := os.Stat(p)
		if err != nil {
			return Input{err: ioError(p, err)}
		}
		var names []string
		if info.IsDir() {
			err := filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
				if err != nil {
					return err
				}
				// As the command: the extension as written (Rust's Path::extension: a
				// name that is only ".yaml" has none).
				base := filepath.Base(path)
				ext := filepath.Ext(base)
				if !d.IsDir() && ext != base && (ext == ".yaml" || ext == ".yml" || ext == ".json") {
					names = append(names, path)
				}
				return nil
			})
			if err != nil {
				return Input{err: ioError(p, err)}
			}
			sort.Slice(names, func(i, j int) bool { return comparePaths(names[i], names[j]) < 0 })
		} else {
			names = []string{p}
		}
		for _, name := range names {
			b, err := os.ReadFile(name)
			if err != nil {
				return Input{err: ioError(name, err)}
			}
			in.files = append(in.files, file{Name: name, Text: string(b)})
		}
	}
	return in
}

// comparePaths orders paths as the command does (Rust's Path ordering): component by
// component, so "a/x" comes before "a-b/x".
func comparePaths(a, b string) int {
	pa, pb := pathComponents(a), pathComponents(b)
	for i := 0; i < len(pa) && i < len(pb); i++ {
		if c := strings.Compare(pa[i], pb[i]); c != 0 {
			return c
		}
	}
	return len(pa) - len(pb)
}

func pathComponents(p string) []string {
	var out []string
	for _, c := range strings.Split(p, "/") {
		if c != "" && c != "." {
			out = append(out, c)
		}
	}
	return out
}

func ioError(path string, err error) *Error {
	line := fmt.Sprintf("%s: %v", path, err)
	return &Error{Kind: KindIoError, Message: line,
		Problems: []Problem{{Line: line, File: path, Message: err.Error()}}}
}

// Objects is manifests as Go objects: typed k8s.io/api objects (pointers, e.g.
// *corev1.Pod, *resourcev1.ResourceClaim) and *unstructured.Unstructured. apiVersion
// and kind are filled in for the typed kinds gangpack reads (core/v1 Pod, Node,
// Namespace; scheduling.k8s.io PriorityClass, Workload, PodGroup; resource.k8s.io
// ResourceSlice, DeviceClass, ResourceClaim, ResourceClaimTemplate, DeviceTaintRule,
// in every group version k8s.io/api has) when left empty. Messages name the objects
// "objects", item by item.
func Objects(objs ...runtime.Object) Input {
	items := make([]json.RawMessage, 0, len(objs))
	for i, o := range objs {
		b, err := objectJSON(o)
		if err != nil {
			line := fmt.Sprintf("objects[%d]: %v", i, err)
			return Input{err: &Error{Kind: KindInvalidArgument, Message: line,
				Problems: []Problem{{Line: line, Field: fmt.Sprintf("objects[%d]", i), Message: err.Error()}}}}
		}
		items = append(items, b)
	}
	list, err := json.Marshal(map[string]any{
		"apiVersion": "v1", "kind": "List", "metadata": map[string]any{}, "items": items,
	})
	if err != nil {
		return Input{err: &Error{Kind: KindInvalidArgument, Message: err.Error()}}
	}
	return Input{files: []file{{Name: "objects", Text: string(list)}}}
}

// Join is the inputs one after another.
func Join(inputs ...Input) Input {
	var out Input
	for _, in := range inputs {
		if in.err != nil {
			return Input{err: in.err}
		}
		out.files = append(out.files, in.files...)
	}
	return out
}

// gvks are the group versions of the typed objects Objects fills in.
var scheme = func() *runtime.Scheme {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{
		corev1.AddToScheme, schedulingv1.AddToScheme, schedulingv1alpha3.AddToScheme,
		schedulingv1beta1.AddToScheme, resourcev1.AddToScheme, resourcev1beta1.AddToScheme,
		resourcev1beta2.AddToScheme, resourcev1alpha3.AddToScheme,
	} {
		if err := add(s); err != nil {
			panic(err)
		}
	}
	return s
}()

func objectJSON(o runtime.Object) ([]byte, error) {
	if o == nil {
		return nil, fmt.Errorf("a nil object")
	}
	if u, ok := o.(*unstructured.Unstructured); ok {
		if u.GetAPIVersion() == "" || u.GetKind() == "" {
			return nil, fmt.Errorf("unstructured object %q has no apiVersion or kind", u.GetName())
		}
		return u.MarshalJSON()
	}
	gvk := o.GetObjectKind().GroupVersionKind()
	if gvk.Kind == "" || gvk.Version == "" {
		kinds, _, err := scheme.ObjectKinds(o)
		if err != nil || len(kinds) == 0 {
			return nil, fmt.Errorf("%T: set apiVersion and kind (not a type gangpack knows)", o)
		}
		gvk = kinds[0]
	}
	b, err := json.Marshal(o)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber() // int64 quantities and counts stay exact
	if err := d.Decode(&m); err != nil {
		return nil, err
	}
	m["apiVersion"], m["kind"] = gvk.GroupVersion().String(), gvk.Kind
	return json.Marshal(m)
}
