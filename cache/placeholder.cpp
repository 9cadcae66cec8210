// Placeholder so the library has a source until the database lands.
namespace ssmtune::cache {}
