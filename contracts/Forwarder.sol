// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

/// One invoice option's deposit address: it only ever sends what it holds to its recipient, so
/// funds can never be stranded there. Anyone may call `flush`; tokens that return no boolean from
/// `transfer` (USDT on ethereum) are accepted the way SafeERC20 accepts them.
contract Forwarder {
    address public immutable recipient;

    constructor(address recipient_) {
        recipient = recipient_;
    }

    function flush(address token) external {
        (bool read, bytes memory balanceData) = token.staticcall(abi.encodeWithSelector(0x70a08231, address(this)));
        require(read && balanceData.length >= 32, "balanceOf failed");
        uint256 balance = abi.decode(balanceData, (uint256));
        if (balance == 0) return;
        (bool sent, bytes memory data) = token.call(abi.encodeWithSelector(0xa9059cbb, recipient, balance));
        require(sent && (data.length == 0 ? token.code.length > 0 : abi.decode(data, (bool))), "transfer failed");
    }
}
