//! Fixtures shared by the gangpack benchmarks and tests.
