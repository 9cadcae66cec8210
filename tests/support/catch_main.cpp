// Catch2 main for the CPU suites.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
