mod errors;
mod lexer;
mod parser;
mod whitespace;
