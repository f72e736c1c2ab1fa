package naivesched

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// predicate says whether a device (of driver) matches a selector.
type predicate func(driver string, d *resourcev1.Device) bool

// The CEL this scheduler understands: `a && b && ...` of
//
//	device.driver == "X"
//	device.attributes["DOMAIN"].NAME == VALUE         (a string, an int or a bool)
//	device.capacity["DOMAIN"].NAME.compareTo(quantity("Q")) OP 0   (OP: == != < <= > >=)
//
// Anything else is not understood: the claim stays pending.
var (
	clauseDriver    = regexp.MustCompile(`^device\.driver\s*==\s*"([^"\\]*)"$`)
	clauseAttribute = regexp.MustCompile(`^device\.attributes\["([^"\\]+)"\]\.([A-Za-z_][A-Za-z0-9_]*)\s*==\s*("([^"\\]*)"|-?[0-9]+|true|false)$`)
	clauseCapacity  = regexp.MustCompile(`^device\.capacity\["([^"\\]+)"\]\.([A-Za-z_][A-Za-z0-9_]*)\.compareTo\(quantity\("([^"\\]+)"\)\)\s*(==|!=|<=|>=|<|>)\s*0$`)
)

// compileCEL turns a selector's expression into a predicate, or says why not.
func compileCEL(expression string) (predicate, error) {
	var tests []predicate
	for _, clause := range strings.Split(expression, "&&") {
		clause = strings.TrimSpace(clause)
		if m := clauseDriver.FindStringSubmatch(clause); m != nil {
			want := m[1]
			tests = append(tests, func(driver string, _ *resourcev1.Device) bool { return driver == want })
			continue
		}
		if m := clauseAttribute.FindStringSubmatch(clause); m != nil {
			domain, name, literal := m[1], m[2], m[3]
			tests = append(tests, attributeEquals(domain, name, literal, m[4]))
			continue
		}
		if m := clauseCapacity.FindStringSubmatch(clause); m != nil {
			want, err := resource.ParseQuantity(m[3])
			if err != nil {
				return nil, fmt.Errorf("CEL %q: %w", clause, err)
			}
			tests = append(tests, capacityCompares(m[1], m[2], want, m[4]))
			continue
		}
		return nil, fmt.Errorf("CEL %q is not understood", clause)
	}
	return func(driver string, d *resourcev1.Device) bool {
		for _, t := range tests {
			if !t(driver, d) {
				return false
			}
		}
		return true
	}, nil
}

// qualified finds a device's attribute or capacity by DOMAIN and NAME: the key
// `DOMAIN/NAME`, or the bare NAME when DOMAIN is the device's driver.
func qualified[V any](m map[resourcev1.QualifiedName]V, driver, domain, name string) (V, bool) {
	if v, ok := m[resourcev1.QualifiedName(domain+"/"+name)]; ok {
		return v, true
	}
	if domain == driver {
		v, ok := m[resourcev1.QualifiedName(name)]
		return v, ok
	}
	var zero V
	return zero, false
}

func attributeEquals(domain, name, literal, str string) predicate {
	return func(driver string, d *resourcev1.Device) bool {
		a, ok := qualified(d.Attributes, driver, domain, name)
		if !ok {
			return false // CEL: no such key, an evaluation error; never a match
		}
		switch {
		case strings.HasPrefix(literal, `"`):
			return a.StringValue != nil && *a.StringValue == str
		case literal == "true" || literal == "false":
			return a.BoolValue != nil && strconv.FormatBool(*a.BoolValue) == literal
		default:
			n, err := strconv.ParseInt(literal, 10, 64)
			return err == nil && a.IntValue != nil && *a.IntValue == n
		}
	}
}

func capacityCompares(domain, name string, want resource.Quantity, op string) predicate {
	return func(driver string, d *resourcev1.Device) bool {
		c, ok := qualified(d.Capacity, driver, domain, name)
		if !ok {
			return false
		}
		cmp := c.Value.Cmp(want)
		switch op {
		case "==":
			return cmp == 0
		case "!=":
			return cmp != 0
		case "<":
			return cmp < 0
		case "<=":
			return cmp <= 0
		case ">":
			return cmp > 0
		default:
			return cmp >= 0
		}
	}
}

// selectors compiles a list of selectors (CEL only).
func selectors(list []resourcev1.DeviceSelector) ([]predicate, error) {
	out := make([]predicate, 0, len(list))
	for _, s := range list {
		if s.CEL == nil {
			return nil, fmt.Errorf("a selector without cel")
		}
		p, err := compileCEL(s.CEL.Expression)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}
