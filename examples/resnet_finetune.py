"""The autograd tutorial's training step and finetuning on a ResNet-18.

A ResNet-18 (the architecture torchvision builds, randomly initialised here: no
pretrained weights are downloaded) takes one training step on a random 3x64x64
image, then gets frozen except for a new 10-class head, as the tutorial does.
Run it with `python examples/resnet_finetune.py`.
"""

import ferrograd as torch
from ferrograd import nn, optim


class BasicBlock(nn.Module):
    """Two 3x3 convolutions with batch norm and a shortcut (projected when the shape changes)."""

    def __init__(self, in_planes: int, planes: int, stride: int = 1) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(in_planes, planes, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(planes)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = nn.Conv2d(planes, planes, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes)
        self.downsample = None
        if stride != 1 or in_planes != planes:
            self.downsample = nn.Sequential(
                nn.Conv2d(in_planes, planes, 1, stride, bias=False), nn.BatchNorm2d(planes)
            )

    def forward(self, x):
        identity = x if self.downsample is None else self.downsample(x)
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return self.relu(out + identity)


class ResNet18(nn.Module):
    def __init__(self, num_classes: int = 1000) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(3, 64, 7, 2, 3, bias=False)
        self.bn1 = nn.BatchNorm2d(64)
        self.relu = nn.ReLU(inplace=True)
        self.maxpool = nn.MaxPool2d(3, 2, 1)
        widths = [(64, 64, 1), (64, 128, 2), (128, 256, 2), (256, 512, 2)]
        for i, (cin, cout, stride) in enumerate(widths, start=1):
            setattr(self, f"layer{i}", nn.Sequential(BasicBlock(cin, cout, stride), BasicBlock(cout, cout)))
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(512, num_classes)

    def forward(self, x):
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        return self.fc(torch.flatten(self.avgpool(x), 1))


def training_step(model):
    """The tutorial's single step: forward, a sum of errors as the loss, backward, SGD."""
    data = torch.rand(1, 3, 64, 64)
    labels = torch.rand(1, 1000)
    prediction = model(data)
    loss = (prediction - labels).sum()
    loss.backward()
    optimizer = optim.SGD(model.parameters(), lr=1e-2, momentum=0.9)
    optimizer.step()
    return loss.item()


def finetune_head(model):
    """Freezes every parameter, replaces the classifier, and trains only the classifier."""
    for param in model.parameters():
        param.requires_grad = False
    model.fc = nn.Linear(512, 10)
    model.zero_grad()
    optimizer = optim.SGD(model.parameters(), lr=1e-2, momentum=0.9)
    model(torch.rand(2, 3, 64, 64)).sum().backward()
    optimizer.step()
    return [name for name, p in model.named_parameters() if p.grad is not None]


def main(verbose: bool = True):
    torch.manual_seed(0)
    model = ResNet18()
    loss = training_step(model)
    trained = finetune_head(model)
    if verbose:
        print(f"training step loss {loss:.3f}; parameters with gradients after freezing: {trained}")
    return loss, trained


if __name__ == "__main__":
    main()
