"""``python -m rdpjax.mechanisms``: every mechanism with its exact D_λ at λ = 2, 5, 7."""

from rdpjax.mechanisms.zoo import format_table


def main() -> None:
    """Print the zoo's table (:func:`rdpjax.mechanisms.zoo.format_table`)."""
    print(format_table())


if __name__ == "__main__":
    main()
